import { randomBytes } from "node:crypto";
import { chromium, type Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "#shared/browsers/task/digest.ts";
import { startBrowserTaskEntry, type BrowserTaskEntry } from "../support/browser-task-entry.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";
import { startTestSite } from "../support/pools.ts";

const adminSecret = randomBytes(32).toString("base64url");

let executables: Awaited<ReturnType<typeof loginChromiumForTests>>;
let site: Awaited<ReturnType<typeof startTestSite>>;
let entry: BrowserTaskEntry;
const clients: Browser[] = [];

beforeAll(async () => {
  executables = await loginChromiumForTests();
  site = await startTestSite("<html><head><title>the last holder's page</title></head><body>ok</body></html>");
  entry = await startBrowserTaskEntry({ chromium: executables.executablePath, adminSecret, devtoolsId: "bs_reset_test" });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await entry?.dispose();
  await site?.stop();
  await executables?.dispose();
});

function admin(method: string, body?: unknown, query = ""): Promise<Response> {
  return fetch(`${entry.origin}/lease${query}`, {
    method,
    headers: { authorization: `Bearer ${adminSecret}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Each token's lease is named after its first characters, as the pool names a lease by its start. */
const leaseIdOf = (token: string) => `lease-${token.slice(0, 8)}`;

/** Grants a fresh lease and answers its token. */
async function grant(expiresAt = new Date(Date.now() + 60_000)): Promise<string> {
  const token = randomBytes(32).toString("base64url");
  const response = await admin("PUT", { lease_id: leaseIdOf(token), token_sha256: sha256Hex(token), expires_at: expiresAt.toISOString() });
  expect(response.status).toBe(204);
  return token;
}

async function connect(token: string): Promise<Browser> {
  const client = await chromium.connectOverCDP(`ws://127.0.0.1:${entry.port}${entry.devtoolsPath}?token=${token}`);
  clients.push(client);
  return client;
}

/** What a lease's holder leaves behind: the first page navigated, two more pages, and a page in a context of its own. */
async function leaveThingsOpen(client: Browser): Promise<void> {
  const context = client.contexts()[0] as NonNullable<ReturnType<Browser["contexts"]>[0]>;
  const first = context.pages()[0] ?? (await context.newPage());
  await first.goto(site.url);
  for (let index = 0; index < 2; index++) await (await context.newPage()).goto(site.url);
  await (await (await client.newContext()).newPage()).goto(site.url);
  expect(client.contexts().flatMap((each) => each.pages())).toHaveLength(4);
}

const cut = (client: Browser) => eventually(async () => (client.isConnected() ? undefined : true), "the last holder's client to be cut");

/** The URL of every page the next holder's client finds, in every context; it finds no context but the default one. */
async function pagesSeenByNextHolder(): Promise<string[]> {
  const client = await connect(await grant());
  const session = await client.newBrowserCDPSession();
  expect((await session.send("Target.getBrowserContexts")).browserContextIds).toEqual([]);
  await session.detach();
  return client.contexts().flatMap((context) => context.pages().map((page) => page.url()));
}

describe("the browser task's reset between leases", () => {
  it("leaves the next holder one blank page when the lease is ended", async () => {
    const token = await grant();
    const last = await connect(token);
    await leaveThingsOpen(last);

    expect((await admin("DELETE", undefined, `?lease_id=${leaseIdOf(token)}`)).status).toBe(204);

    await cut(last);
    expect(await pagesSeenByNextHolder()).toEqual(["about:blank"]);
  });

  it("leaves the next holder one blank page when a new lease replaces the current one", async () => {
    const last = await connect(await grant());
    await leaveThingsOpen(last);

    const pages = await pagesSeenByNextHolder();

    await cut(last);
    expect(pages).toEqual(["about:blank"]);
  });

  it("leaves the next holder one blank page when the lease expires", async () => {
    const last = await connect(await grant(new Date(Date.now() + 5000)));
    await leaveThingsOpen(last);

    await cut(last);

    expect(await pagesSeenByNextHolder()).toEqual(["about:blank"]);
  });
});
