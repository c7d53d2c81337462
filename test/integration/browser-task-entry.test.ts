import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startBrowserTaskEntry, titleOverCdp, type BrowserTaskEntry } from "../support/browser-task-entry.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";
import { settledContent, startLoopbackSite, startTestSite, upgradeStatus } from "../support/pools.ts";
import { sha256Hex } from "#shared/browsers/task/digest.ts";

const adminSecret = randomBytes(32).toString("base64url");
const devtoolsId = "bs_entry_test";

let executables: Awaited<ReturnType<typeof loginChromiumForTests>>;
let site: Awaited<ReturnType<typeof startTestSite>>;
/** A listener of the launcher's own, whose port the entry is told to deny, and a site it is not. */
let deniedSite: Awaited<ReturnType<typeof startLoopbackSite>>;
let allowedSite: Awaited<ReturnType<typeof startLoopbackSite>>;
let entry: BrowserTaskEntry;
let port: number;
let devtoolsPath: string;
/** A file any process may read, holding a marker no page may show. */
const localFile = { dir: "", path: "", url: "", marker: randomBytes(16).toString("hex") };

beforeAll(async () => {
  executables = await loginChromiumForTests();
  site = await startTestSite("<html><head><title>through the proxy</title></head><body>ok</body></html>");
  localFile.dir = await mkdtemp(join(tmpdir(), "acs-local-file-"));
  await chmod(localFile.dir, 0o755);
  localFile.path = join(localFile.dir, "readable.txt");
  await writeFile(localFile.path, localFile.marker, { mode: 0o644 });
  localFile.url = pathToFileURL(localFile.path).href;
  [deniedSite, allowedSite] = await Promise.all([startLoopbackSite(), startLoopbackSite()]);
  entry = await startBrowserTaskEntry({
    chromium: executables.executablePath,
    environment: {
      BROWSER_TASK_ADMIN_SECRET_SHA256: sha256Hex(adminSecret),
      BROWSER_TASK_DEVTOOLS_ID: devtoolsId,
      BROWSER_TASK_DENIED_PORTS: `1,${deniedSite.port}`,
    },
  });
  ({ port, devtoolsPath } = entry);
});

afterAll(async () => {
  await entry?.dispose();
  await site?.stop();
  await deniedSite?.stop();
  await allowedSite?.stop();
  if (localFile.dir) await rm(localFile.dir, { recursive: true, force: true });
  await executables?.dispose();
});

const newToken = () => randomBytes(32).toString("base64url");

function admin(method: string, path: string, body?: unknown, secret = adminSecret) {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A lease's id, as the pool names a lease by its start: here each token's lease is named after its first characters. */
const leaseIdOf = (token: string) => `lease-${token.slice(0, 8)}`;

async function grant(token: string, expiresAt = new Date(Date.now() + 60_000)): Promise<void> {
  const response = await admin("PUT", "/lease", { lease_id: leaseIdOf(token), token_sha256: sha256Hex(token), expires_at: expiresAt.toISOString() });
  expect(response.status).toBe(204);
}

const endLease = (token: string) => admin("DELETE", `/lease?lease_id=${leaseIdOf(token)}`);

const devtoolsUrl = (token?: string, path = devtoolsPath) => `ws://127.0.0.1:${port}${path}${token === undefined ? "" : `?token=${token}`}`;

/** A DevTools client that stays connected. */
function openClient(url: string): Promise<WebSocket> {
  return new Promise((opened, failed) => {
    const socket = new WebSocket(url);
    socket.once("open", () => opened(socket));
    socket.once("error", failed);
  });
}

const closed = (socket: WebSocket) => eventually(async () => (socket.readyState === WebSocket.CLOSED ? true : undefined), "the client to be cut");

/** The entry's process and every process below it, read from /proc. */
function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [root];
  for (let index = 0; index < tree.length; index++) {
    for (const [pid, parent] of parents) if (parent === tree[index]) tree.push(pid);
  }
  return tree;
}

const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);

function chromiumOfEntry(): number {
  const browser = processTree(entry.process.pid as number).find((pid) => pid !== entry.process.pid && !commandLine(pid).some((arg) => arg.startsWith("--type=")));
  if (!browser) throw new Error("the entry runs no Chromium");
  return browser;
}

/** TCP ports on which a process of the tree listens: its socket inodes matched against /proc/net/tcp{,6}. */
function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) inodes.add(match[1] as string);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const row of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = row.trim().split(/\s+/);
      const [localAddress, state, inode] = [fields[1], fields[3], fields[9]];
      // 0A is LISTEN.
      if (state === "0A" && inode && inodes.has(inode)) ports.add(Number.parseInt(localAddress?.split(":")[1] ?? "", 16));
    }
  }
  return [...ports];
}

describe("the browser task's entry, run locally", () => {
  it("serves DevTools on the path of the id its launcher chose", () => {
    expect(devtoolsPath).toBe(`/devtools/browser/${devtoolsId}`);
  });

  it("lets the lease's token drive Chromium over CDP", async () => {
    const token = newToken();
    await grant(token);

    expect(await titleOverCdp(devtoolsUrl(token), site.url)).toBe("through the proxy");
  });

  it("refuses a DevTools client without a token, with a wrong one, with an earlier lease's or on another path", async () => {
    const earlier = newToken();
    await grant(earlier);
    const current = newToken();
    await grant(current);

    expect(await upgradeStatus(devtoolsUrl())).toBe(401);
    expect(await upgradeStatus(devtoolsUrl(newToken()))).toBe(401);
    expect(await upgradeStatus(devtoolsUrl(earlier))).toBe(401);
    expect(await upgradeStatus(devtoolsUrl(current, "/devtools/browser/another"))).toBe(404);
    expect(await upgradeStatus(devtoolsUrl(current))).toBe(101);
  });

  it("cuts the open client when the lease ends, and refuses its token from then on", async () => {
    const token = newToken();
    await grant(token);
    const browser = await chromium.connectOverCDP(devtoolsUrl(token));

    expect((await endLease(token)).status).toBe(204);

    await eventually(async () => (browser.isConnected() ? undefined : true), "the client to be cut");
    expect(await upgradeStatus(devtoolsUrl(token))).toBe(401);
  });

  it("leaves the current lease and its client alone when an earlier lease is ended late, and needs the lease named", async () => {
    const earlier = newToken();
    await grant(earlier);
    const current = newToken();
    await grant(current);
    const client = await openClient(devtoolsUrl(current));

    // A release of the earlier lease that comes after the browser was leased again.
    expect((await endLease(earlier)).status).toBe(204);
    expect((await admin("DELETE", "/lease")).status).toBe(400);

    expect(client.readyState).toBe(WebSocket.OPEN);
    const answered = new Promise((received) => client.once("message", received));
    client.send(JSON.stringify({ id: 1, method: "Browser.getVersion" }));
    expect(JSON.parse(String(await answered))).toMatchObject({ id: 1, result: { product: expect.stringMatching(/Chrome/) } });
    client.close();
    await closed(client);
    expect((await endLease(current)).status).toBe(204);
  });

  it("refuses a lease past its expiry, and cuts the client of a lease when it expires", async () => {
    const expired = newToken();
    await grant(expired, new Date(Date.now() - 1000));
    expect(await upgradeStatus(devtoolsUrl(expired))).toBe(401);

    const expiring = newToken();
    await grant(expiring, new Date(Date.now() + 5000));
    const client = await openClient(devtoolsUrl(expiring));

    await closed(client);
    expect(await upgradeStatus(devtoolsUrl(expiring))).toBe(401);
  });

  it("serves one DevTools client at a time, and cuts it when another lease is granted", async () => {
    const token = newToken();
    await grant(token);
    const client = await openClient(devtoolsUrl(token));

    expect(await upgradeStatus(devtoolsUrl(token))).toBe(409);

    await grant(newToken());
    await closed(client);
  });

  it("answers no HTTP DevTools route, and its admin calls only to the admin secret", async () => {
    const token = newToken();
    await grant(token);
    for (const path of ["/json/version", "/json/list", "/json", `/json/version?token=${token}`, `${devtoolsPath}?token=${token}`, "/health", "/lease"]) {
      for (const headers of [{}, { authorization: `Bearer ${newToken()}` }, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
        const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
        expect(response.status, path).toBe(401);
        expect(await response.text()).not.toMatch(/webSocketDebuggerUrl|Browser|devtools/);
      }
    }
    expect((await admin("DELETE", `/lease?lease_id=${leaseIdOf(token)}`, undefined, newToken())).status).toBe(401);
    expect((await admin("PUT", "/lease", { lease_id: "another", token_sha256: "00".repeat(32), expires_at: new Date().toISOString() }, newToken())).status).toBe(401);
    expect((await admin("PUT", "/lease", { lease_id: "another", token_sha256: token, expires_at: "tomorrow" })).status).toBe(400);
    expect((await admin("PUT", "/lease", { token_sha256: sha256Hex(token), expires_at: new Date().toISOString() })).status).toBe(400);
    expect((await admin("GET", "/health")).status).toBe(200);
  });

  it("refuses its client every file: URL: navigated to, in view-source:, in a context of its own, and past the client's own interception", async () => {
    const token = newToken();
    await grant(token);
    const browser = await chromium.connectOverCDP(devtoolsUrl(token));
    try {
      const defaultPage = await (browser.contexts()[0] ?? (await browser.newContext())).newPage();
      const ownContextPage = await (await browser.newContext()).newPage();
      for (const [page, url] of [
        [defaultPage, localFile.url],
        [defaultPage, `view-source:${localFile.url}`],
        [ownContextPage, localFile.url],
      ] as const) {
        await expect(page.goto(url).then((response) => `${url} answered ${response?.status()}`)).rejects.toThrow(/ERR_ACCESS_DENIED/);
        expect(await settledContent(page)).not.toContain(localFile.marker);
      }

      // A client that tries to switch the refusal off: its own browser-wide interception lets the
      // request through, and it cannot detach the entry's session by the browser's target id.
      const session = await browser.newBrowserCDPSession();
      const { targetInfo } = await session.send("Target.getTargetInfo");
      await expect(session.send("Target.detachFromTarget", { targetId: targetInfo.targetId })).rejects.toThrow(/the browser task's own/);
      session.on("Fetch.requestPaused", (event) => void session.send("Fetch.continueRequest", { requestId: event.requestId }).catch(() => {}));
      await session.send("Fetch.enable", { patterns: [{ urlPattern: "file:*" }] });
      await expect(defaultPage.goto(localFile.url)).rejects.toThrow(/ERR_ACCESS_DENIED/);
      expect(await settledContent(defaultPage)).not.toContain(localFile.marker);
    } finally {
      await browser.close();
    }
  });

  it("refuses every request to a denied port, whatever names the host, from a page or its client, and through a redirect", async () => {
    const token = newToken();
    await grant(token);
    const denied = (host: string) => `http://${host}:${deniedSite.port}/ok`;
    const browser = await chromium.connectOverCDP(devtoolsUrl(token));
    try {
      const context = browser.contexts()[0] ?? (await browser.newContext());
      const navigated = await context.newPage();
      for (const url of [denied("127.0.0.1"), denied("localhost"), `${allowedSite.origin}/redirect?to=${encodeURIComponent(denied("localhost"))}`]) {
        await expect(navigated.goto(url).then((response) => `${url} answered ${response?.status()}`)).rejects.toThrow(/ERR_ACCESS_DENIED/);
      }
      // A page of its own: the error page of the last refusal may still replace the one above.
      const page = await context.newPage();
      await page.goto(`${allowedSite.origin}/page`);
      const requests = {
        allowed: `${allowedSite.origin}/ok`,
        "allowed, the denied port in its path": `${allowedSite.origin}/ok/:${deniedSite.port}/`,
        "by 127.0.0.1": denied("127.0.0.1"),
        "by localhost": denied("localhost"),
        "through a redirect": `${allowedSite.origin}/redirect?to=${encodeURIComponent(denied("localhost"))}`,
      };
      const outcomes = await page.evaluate(
        (requests) =>
          Promise.all(
            Object.entries(requests).map(([name, url]) =>
              fetch(url).then(
                async (response) => [name, `answered: ${await response.text()}`],
                (error: unknown) => [name, `refused: ${String(error)}`],
              ),
            ),
          ).then(Object.fromEntries),
        requests,
      );

      expect(outcomes).toEqual(
        Object.fromEntries(Object.keys(requests).map((name) => [name, name.startsWith("allowed") ? "answered: allowed" : expect.stringMatching(/^refused: /)])),
      );
      expect(deniedSite.requests()).toBe(0);
    } finally {
      await browser.close();
    }
  });

  it("refuses its client the commands that hand a page a file of the machine's by its path", async () => {
    const token = newToken();
    await grant(token);
    const browser = await chromium.connectOverCDP(devtoolsUrl(token));
    try {
      const page = await (browser.contexts()[0] ?? (await browser.newContext())).newPage();
      await page.setContent('<input type="file" id="upload">');
      const session = await page.context().newCDPSession(page);
      const { root } = await session.send("DOM.getDocument");
      const { nodeId } = await session.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#upload" });

      await expect(session.send("DOM.setFileInputFiles", { nodeId, files: [localFile.path] })).rejects.toThrow(/refuses commands that hand a page files/);
      await expect(
        session.send("Input.dispatchDragEvent", { type: "dragEnter", x: 1, y: 1, data: { items: [], files: [localFile.path], dragOperationsMask: 1 } }),
      ).rejects.toThrow(/refuses commands that hand a page files/);
      expect(await page.locator("#upload").evaluate((input) => (input as unknown as { files: { length: number } }).files.length)).toBe(0);
    } finally {
      await browser.close();
    }
  });

  it("opens no DevTools port: Chromium speaks over a pipe, and the entry's port is the tree's only listening one", () => {
    const args = commandLine(chromiumOfEntry());

    expect(args).toContain("--remote-debugging-pipe");
    expect(args.filter((arg) => arg.startsWith("--remote-debugging-port") || arg.startsWith("--remote-debugging-address"))).toEqual([]);
    expect(listeningPorts(processTree(entry.process.pid as number))).toEqual([port]);
  });

  it("ends Chromium when it is told to stop", async () => {
    const browser = chromiumOfEntry();

    entry.process.kill("SIGTERM");

    expect(await entry.exited).toBe(0);
    await eventually(async () => (readdirSync("/proc").includes(String(browser)) ? undefined : true), "Chromium to exit");
  });
});
