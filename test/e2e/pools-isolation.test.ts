import { execFile, type ChildProcessWithoutNullStreams } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { apiKeys } from "#shared/composition/api-keys.ts";
import { loadConfig } from "#shared/config.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoolResource, SessionResource } from "#shared/domain/pool.ts";
import { runningInstance } from "../../infra/local/running.ts";
import { startService } from "../support/npm-start.ts";
import { eventually } from "../support/poll.ts";
import { chromiumProcesses, poolApi, settledContent, startLoopbackSite } from "../support/pools.ts";

const apiKeyScript = resolve(import.meta.dirname, "../../scripts/api-key.ts");
const dataDir = mkdtempSync(join(tmpdir(), "acs-pool-isolation-"));
const browserRoot = join(dataDir, "browsers");
const children: ChildProcessWithoutNullStreams[] = [];
const isRoot = process.getuid?.() === 0;
/** The unprivileged user a non-root service would run as, where the tests run as root. */
const nobody = 65534;

/** Two orgs of one service, each holding a leased browser. */
const orgs: Record<"local" | "rival", { call: ReturnType<typeof poolApi>; leased: SessionResource }> = {} as never;

const browserDir = (org: keyof typeof orgs) => join(browserRoot, orgs[org].leased.session_id);
const entryOrigin = (org: keyof typeof orgs) => `http://127.0.0.1:${new URL(orgs[org].leased.cdp_ws_url).port}`;

async function leaseIn(call: ReturnType<typeof poolApi>): Promise<SessionResource> {
  await call<PoolResource>("POST", "/browser_pools", { name: "isolated", size: 1, fill_rate_per_minute: 6000 });
  await eventually(async () => ((await call<PoolResource>("GET", "/browser_pools/isolated")).body.available_count === 1 ? true : undefined), "the pool to fill");
  const { status, body } = await call<SessionResource>("POST", "/browser_pools/isolated/acquire", {});
  expect(status).toBe(200);
  return body;
}

/** Every regular file under `dir`, its subdirectories' included. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Only a service run as root isolates its browsers and so serves a second org: run as another user,
// it refuses one (below).
describe.runIf(isRoot)("pooled browsers of two orgs on one local service", () => {
  beforeAll(async () => {
    const service = startService(dataDir, children);
    const { url, apiKey } = await service.ready;
    const minted = await promisify(execFile)(process.execPath, [apiKeyScript, "--org", "rival"], { env: { ...process.env, DATA_DIR: dataDir } });
    const rivalKey = /\n(ak_\S+)/.exec(minted.stdout)?.[1] as string;
    for (const [org, key] of [["local", apiKey], ["rival", rivalKey]] as const) {
      const call = poolApi({ url, apiKey: key });
      orgs[org] = { call, leased: await leaseIn(call) };
    }
  });

  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
    for (const pid of chromiumProcesses(browserRoot).values()) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Ended with the service.
      }
    }
  });

  it("refuse their DevTools client every file: URL: the host's, the service's data, the other org's browser", async () => {
    const targets = [
      "/etc/hostname",
      join(dataDir, "api-key"),
      ...filesUnder(browserDir("rival")).filter((file) => !file.includes("/profile/")),
    ];
    const browser = await chromium.connectOverCDP(orgs.local.leased.cdp_ws_url);
    try {
      const page = await (browser.contexts()[0] ?? (await browser.newContext())).newPage();
      for (const file of targets) {
        const url = pathToFileURL(file).href;
        await expect(page.goto(url).then((response) => `${url} answered ${response?.status()}`)).rejects.toThrow(/ERR_ACCESS_DENIED/);
        // A content too short (a host name, say) could occur in the error page by chance.
        const content = readFileSync(file, "utf8").trim();
        if (content.length >= 16) expect(await settledContent(page)).not.toContain(content);
      }
      await expect(page.goto(pathToFileURL(browserRoot).href)).rejects.toThrow(/ERR_ACCESS_DENIED/);
    } finally {
      await browser.close();
    }
  });

  it("refuse their pages every request to the service's own stand-ins, by any name of the host and through a redirect", async () => {
    const running = runningInstance(dataDir);
    const standIns = { dynamodb: running?.dynamoEndpoint as string, s3: running?.s3Endpoint as string };
    expect(Object.values(standIns)).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/)]);
    const site = await startLoopbackSite();
    // Any credentials will do for DynamoDB Local. Whether a page may read an answer rests on CORS
    // headers: the opaque (no-cors) requests show whether a request reaches the port at all.
    const scan = {
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "DynamoDB_20120810.Scan",
        authorization: "AWS4-HMAC-SHA256 Credential=page/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00",
      },
      body: JSON.stringify({ TableName: "auth-connections" }),
    };
    const opaque = { mode: "no-cors" };
    const requests: Record<string, [string, object]> = { allowed: [`${site.origin}/ok`, {}] };
    for (const host of ["127.0.0.1", "localhost"]) {
      const at = (endpoint: string) => endpoint.replace("127.0.0.1", host);
      requests[`allowed by ${host}`] = [`${at(site.origin)}/ok`, {}];
      requests[`DynamoDB scan by ${host}`] = [`${at(standIns.dynamodb)}/`, scan];
      requests[`DynamoDB by ${host}`] = [`${at(standIns.dynamodb)}/`, opaque];
      requests[`s3rver bucket by ${host}`] = [`${at(standIns.s3)}/auth-connection-profiles`, opaque];
      requests[`s3rver by a redirect to ${host}`] = [`${site.origin}/redirect?to=${encodeURIComponent(`${at(standIns.s3)}/auth-connection-profiles`)}`, opaque];
      requests[`DynamoDB by a redirect to ${host}`] = [`${site.origin}/redirect?to=${encodeURIComponent(`${at(standIns.dynamodb)}/`)}`, opaque];
    }
    const browser = await chromium.connectOverCDP(orgs.local.leased.cdp_ws_url);
    try {
      const page = await (browser.contexts()[0] ?? (await browser.newContext())).newPage();
      await page.goto(`${site.origin}/page`);
      const outcomes = await page.evaluate(
        (requests) =>
          Promise.all(
            Object.entries(requests).map(([name, [url, init]]) =>
              fetch(url, init as RequestInit)
                .then((response) => response.text())
                .then(
                  (text) => [name, `answered: ${text}`],
                  (error: unknown) => [name, `refused: ${String(error)}`],
                ),
            ),
          ).then(Object.fromEntries),
        requests,
      );

      expect(outcomes).toEqual(
        Object.fromEntries(Object.keys(requests).map((name) => [name, name.startsWith("allowed") ? "answered: allowed" : expect.stringMatching(/^refused: /)])),
      );
      for (const url of [`${standIns.s3}/auth-connection-profiles`, `${site.origin}/redirect?to=${encodeURIComponent(`${standIns.dynamodb.replace("127.0.0.1", "localhost")}/`)}`]) {
        await expect(page.goto(url).then((response) => `${url} answered ${response?.status()}`)).rejects.toThrow(/ERR_ACCESS_DENIED/);
      }
    } finally {
      await browser.close();
      await site.stop();
    }
  });

  it("keep in no file under the browsers' directory a secret that any browser's entry takes for its admin", async () => {
    const candidates = new Set<string>();
    for (const file of filesUnder(browserRoot)) {
      for (const word of readFileSync(file, "latin1").match(/[A-Za-z0-9_-]{20,}/g) ?? []) candidates.add(word);
    }
    expect(candidates.size).toBeGreaterThan(0);
    for (const org of ["local", "rival"] as const) {
      // The entry answers its health only to its admin: a bearer it takes would answer 200.
      const statuses = new Set<number>();
      for (const candidate of candidates) {
        statuses.add((await fetch(`${entryOrigin(org)}/health`, { headers: { authorization: `Bearer ${candidate}` } })).status);
      }
      expect([...statuses], org).toEqual([401]);
    }
    // The service itself still reaches both: each lease is released through its entry.
    for (const org of ["local", "rival"] as const) {
      const { status } = await orgs[org].call("POST", "/browser_pools/isolated/release", { session_id: orgs[org].leased.session_id, reuse: true });
      expect(status).toBe(204);
      orgs[org].leased = await orgs[org].call<SessionResource>("POST", "/browser_pools/isolated/acquire", {}).then(({ body }) => body);
    }
  });

  it("run each Chromium as a user of its own, who cannot read the service's data nor the other browser, nor signal it", async () => {
    const processes = chromiumProcesses(browserRoot);
    const uidOf = (org: keyof typeof orgs) => {
      const status = readFileSync(`/proc/${processes.get(orgs[org].leased.session_id)}/status`, "utf8");
      return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    };
    const [localUid, rivalUid] = [uidOf("local"), uidOf("rival")];
    expect(localUid).not.toBe(0);
    expect(rivalUid).not.toBe(0);
    expect(localUid).not.toBe(rivalUid);

    const attempts = {
      listDataDir: ["readdir", dataDir],
      listBrowsers: ["readdir", browserRoot],
      apiKey: ["readFile", join(dataDir, "api-key")],
      running: ["readFile", join(dataDir, "running.json")],
      adminKey: ["readFile", join(browserRoot, ".admin-key")],
      dynamodb: ["readdir", join(dataDir, "dynamodb")],
      s3: ["readdir", join(dataDir, "s3")],
      rivalProfile: ["readdir", join(browserDir("rival"), "profile")],
      rivalEntry: ["readFile", join(browserDir("rival"), "entry.out")],
      rivalRecord: ["readFile", join(browserDir("rival"), "browser.json")],
      ownEntry: ["readFile", join(browserDir("local"), "entry.out")],
    };
    const probe = `
      const fs = require("node:fs");
      const outcome = {};
      for (const [name, [call, path]] of Object.entries(${JSON.stringify(attempts)})) {
        try { fs[call + "Sync"](path); outcome[name] = "read"; } catch (error) { outcome[name] = error.code; }
      }
      try { process.kill(${processes.get(orgs.rival.leased.session_id)}, 0); outcome.signalRival = "sent"; } catch (error) { outcome.signalRival = error.code; }
      process.stdout.write(JSON.stringify(outcome));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", probe], { uid: localUid, gid: localUid, cwd: "/" });

    expect(JSON.parse(stdout)).toEqual({ ...Object.fromEntries(Object.keys(attempts).map((name) => [name, "EACCES"])), signalRival: "EPERM" });
    expect(statSync(join(browserDir("local"), "profile")).uid).toBe(localUid);
  });
});

describe("a local service whose pooled browsers cannot be isolated", () => {
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
  });

  it("refuses to mint a key for a second org", async () => {
    // A service run by an ordinary user, on data of that user's.
    const ownDataDir = mkdtempSync(join(tmpdir(), "acs-pool-unisolated-"));
    try {
      if (isRoot) chownSync(ownDataDir, nobody, nobody);
      chmodSync(ownDataDir, 0o700);
      const minting = promisify(execFile)(process.execPath, [apiKeyScript, "--org", "second"], {
        env: { ...process.env, DATA_DIR: ownDataDir },
        ...(isRoot ? { uid: nobody, gid: nobody } : {}),
      });

      await expect(minting).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/no key minted for the org 'second': pooled browsers run as this service's user/) });
      expect(readdirSync(ownDataDir)).toEqual([]);
    } finally {
      rmSync(ownDataDir, { recursive: true, force: true });
    }
  });

  it("says so at its start, mints no key for a second org, and refuses one minted before", async () => {
    // A DATA_DIR under a directory no other user may pass through.
    const closed = mkdtempSync(join(tmpdir(), "acs-pool-closed-"));
    const closedDataDir = join(closed, "data");
    try {
      const service = startService(closedDataDir, children, ["--no-demo"]);
      const { url, apiKey } = await service.ready;
      const minting = promisify(execFile)(process.execPath, [apiKeyScript, "--org", "second"], { env: { ...process.env, DATA_DIR: closedDataDir } });
      await expect(minting).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/no key minted for the org 'second'/) });
      // A key of another org already in the table (minted while the machine isolated its browsers).
      const table = loadConfig({ DEPLOYMENT_MODE: "local", TABLE_NAME: "auth-connections", DYNAMODB_ENDPOINT: runningInstance(closedDataDir)?.dynamoEndpoint });
      const earlierKey = await apiKeys(table).mint("earlier");
      const asEarlier = await poolApi({ url, apiKey: earlierKey })<{ code: string; message: string }>("GET", "/browser_pools");
      const asLocal = await poolApi({ url, apiKey })("GET", "/browser_pools");
      service.child.kill("SIGINT");
      await service.exited;

      expect(service.output()).toMatch(/Warning: pooled browsers (cannot run each as a user of its own|run as this service's user)/);
      expect(service.output()).toContain("this service is for the org 'local' alone");
      expect(asEarlier).toMatchObject({ status: 403, body: { code: "forbidden", message: expect.stringContaining("serves the org 'local' alone") } });
      expect(asLocal.status).toBe(200);
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });
});
