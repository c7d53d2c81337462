import type Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppLoginSite, type AppLoginSite, type AppName } from "../sites/app-login-site.ts";
import { nextFlowState, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let site: AppLoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  site = await startAppLoginSite();
  // A flow waits 18 s for input, room for a loaded CI machine.
  stack = await startTestStack({ timeScale: 0.03 });
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
  await site?.stop();
});

function typed(connection: Connection, password: string) {
  const values: Record<string, string> = {};
  for (const field of connection.fields ?? []) values[field.id] = field.type === "password" ? password : site.user.name;
  return { field_values: values };
}

async function rejectedOnce(app: AppName, password: string): Promise<{ id: string; retry: Connection }> {
  const created = await client.auth.connections.create({ domain: "127.0.0.1", profile_name: `messages-${app}`, login_url: site.loginUrl(app), health_checks: false });
  await client.auth.connections.login(created.id);
  const first = await nextFlowState(client, created.id);
  await client.auth.connections.submit(created.id, typed(first, password));
  await eventually(async () => ((await client.auth.connections.retrieve(created.id)).flow_step !== "AWAITING_INPUT" ? true : undefined), "the submit to be taken");
  return { id: created.id, retry: await nextFlowState(client, created.id) };
}

describe("website_error on a connection, from real applications' markup", () => {
  it("WordPress: the connection shows #login_error's text after a wrong password, and null once logged in", async () => {
    const { id, retry } = await rejectedOnce("wordpress", "wrong horse");

    expect(retry).toMatchObject({ flow_status: "IN_PROGRESS", website_error: "ERROR: The password you entered for the username ada is incorrect. Lost your password?" });
    await client.auth.connections.submit(id, typed(retry, site.user.password));
    const ended = await eventually(async () => {
      const connection = await client.auth.connections.retrieve(id);
      return connection.flow_status === "IN_PROGRESS" ? undefined : connection;
    }, "the flow to end");
    expect(ended).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", website_error: null });
  });

  it("phpMyAdmin-like: the site's Access denied, not the <noscript> warning before it", async () => {
    const { retry } = await rejectedOnce("phpmyadmin", "wrong horse");

    expect(retry.website_error).toBe("mysqli::real_connect(): (HY000/1045): Access denied for user 'ada'@'localhost' (using password: YES)");
  });

  it("a site that repeats the typed password: the connection never shows it", async () => {
    const { retry } = await rejectedOnce("echo", "tr0ub4dor&3");

    expect(retry).toMatchObject({ flow_step: "AWAITING_INPUT", website_error: null });
    expect(JSON.stringify(retry)).not.toContain("tr0ub4dor");
  });
});
