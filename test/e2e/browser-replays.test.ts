import type Kernel from "@onkernel/sdk";
import { unzipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey } from "#shared/domain/api-keys.ts";
import { replayMask } from "#shared/login/browser/replay.ts";
import { services } from "#shared/services.ts";
import { startScriptSites, type ScriptSites } from "../sites/script-sites.ts";
import { nextFlowState, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { replayLeaks } from "../support/replay-leaks.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let sites: ScriptSites;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
const otherOrgKey = generateApiKey();

beforeAll(async () => {
  sites = await startScriptSites();
  // A flow waits 30 s for input, so that one left unanswered expires within the test.
  stack = await startTestStack({ timeScale: 0.05 });
  client = officialClient(stack);
  await services().apiKeys.register("other-org", otherOrgKey);
});

afterAll(async () => {
  await stack?.stop();
  await sites?.stop();
});

const wrongPassword = "wrong horse staple";

let profiles = 0;
function inlineConnection(recordSession: boolean) {
  return client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: `replays-${++profiles}`,
    login_url: sites.loginUrl("inline"),
    health_checks: false,
    record_session: recordSession,
  });
}

function answer(connection: Connection, password: string) {
  const values: Record<string, string> = {};
  for (const field of connection.fields ?? []) {
    if (field.type === "identifier") values[field.id] = sites.user.email;
    else if (field.type === "password") values[field.id] = password;
  }
  return { field_values: values };
}

/** A login that types a wrong password first, then the right one; answers the state it ended in. */
async function logInAfterAWrongPassword(id: string): Promise<Connection> {
  await client.auth.connections.login(id);
  for (const password of [wrongPassword, sites.user.password]) {
    const waiting = await nextFlowState(client, id);
    expect(waiting.flow_status).toBe("IN_PROGRESS");
    await client.auth.connections.submit(id, answer(waiting, password));
    await eventually(async () => ((await client.auth.connections.retrieve(id)).flow_step !== "AWAITING_INPUT" ? true : undefined), "the submit to be taken");
  }
  return nextFlowState(client, id);
}

async function loginEvent(id: string, status: "SUCCESS" | "EXPIRED") {
  const events = (await client.auth.connections.timeline(id, { type: "login" })).getPaginatedItems();
  const found = events.find((event) => event.status === status);
  if (!found) throw new Error(`no login ${status} on the timeline of ${id}: ${JSON.stringify(events)}`);
  return found as typeof found & { replay_id?: string };
}

function downloadReplay(connectionId: string, replayId: string, apiKey = stack.apiKey): Promise<Response> {
  return fetch(`${stack.url}/auth/connections/${encodeURIComponent(connectionId)}/replays/${encodeURIComponent(replayId)}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
}

const errorOf = async (response: Response) => (await response.json()) as { code: string; message: string };

describe("replays of browser logins (record_session)", () => {
  let recorded: { connectionId: string; replayId: string };

  beforeAll(async () => {
    const created = await inlineConnection(true);
    const ended = await logInAfterAWrongPassword(created.id);
    expect(ended).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
    const event = await loginEvent(created.id, "SUCCESS");
    expect(event.replay_id).toMatch(/^rp_/);
    recorded = { connectionId: created.id, replayId: event.replay_id as string };
  });

  it("names the flow's replay on its SUCCESS event, and downloads it as a Playwright trace with no typed secret and no screencast in any entry", async () => {
    const response = await downloadReplay(recorded.connectionId, recorded.replayId);

    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/zip");
    const zip = new Uint8Array(await response.arrayBuffer());
    const entries = unzipSync(zip);
    expect(Object.keys(entries)).toEqual(expect.arrayContaining(["trace.trace", "trace.network"]));
    // Screencast frames would show the typed identifier as pixels, which no masking reaches.
    expect(Object.keys(entries).filter((name) => name.startsWith("screencast/"))).toEqual([]);
    const actions = new TextDecoder().decode(entries["trace.trace"]);
    expect(actions).toContain('"method":"fill"');
    expect(actions).toContain(replayMask);
    expect(replayLeaks(zip, { password: sites.user.password, "wrong password": wrongPassword, identifier: sites.user.email })).toEqual([]);
  });

  it("answers 404 for a replay of another connection or another org, and for an unknown replay id", async () => {
    const other = await inlineConnection(true);

    const ofAnotherConnection = await downloadReplay(other.id, recorded.replayId);
    const ofAnotherOrg = await downloadReplay(recorded.connectionId, recorded.replayId, otherOrgKey);
    const unknown = await downloadReplay(recorded.connectionId, "rp_0000000000aaaaaaaaaa");

    expect(ofAnotherConnection.status).toBe(404);
    expect((await errorOf(ofAnotherConnection)).message).toContain(`has no replay '${recorded.replayId}'`);
    expect(ofAnotherOrg.status).toBe(404);
    expect((await errorOf(ofAnotherOrg)).message).toContain(`auth connection '${recorded.connectionId}' not found`);
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).message).toContain("has no replay 'rp_0000000000aaaaaaaaaa'");
  });

  it("answers 400 for a malformed replay id", async () => {
    const response = await downloadReplay(recorded.connectionId, "../../profiles/x");

    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toContain("replay_id");
  });

  it("keeps the replay of a flow that expired waiting for input", async () => {
    const created = await inlineConnection(true);
    await client.auth.connections.login(created.id);
    expect((await nextFlowState(client, created.id)).flow_step).toBe("AWAITING_INPUT");

    const ended = await eventually(
      async () => {
        const connection = await client.auth.connections.retrieve(created.id);
        return connection.flow_status === "EXPIRED" ? connection : undefined;
      },
      "the unanswered flow to expire",
      50,
    );

    expect(ended.error_code).toBe("flow_expired");
    const event = await loginEvent(created.id, "EXPIRED");
    expect(event.replay_id).toMatch(/^rp_/);
    const download = await downloadReplay(created.id, event.replay_id as string);
    expect(download.status).toBe(200);
    expect(Object.keys(unzipSync(new Uint8Array(await download.arrayBuffer())))).toEqual(expect.arrayContaining(["trace.trace", "trace.network"]));
  });

  it("keeps no replay of a connection that does not record sessions", async () => {
    const created = await inlineConnection(false);

    const ended = await logInAfterAWrongPassword(created.id);

    expect(ended.flow_status).toBe("SUCCESS");
    expect((await loginEvent(created.id, "SUCCESS")).replay_id).toBeUndefined();
  });
});
