/**
 * A pooled browser's entry: starts Chromium with DevTools on a pipe (no DevTools port at all) and
 * serves the lease proxy, the only way in, on one port. The same program runs for each local pooled
 * browser and as the browser container's entrypoint.
 *
 * Settings come from the environment, read once here: BROWSER_TASK_HOST and BROWSER_TASK_PORT
 * (0: any free port), BROWSER_TASK_ADMIN_SECRET_SHA256 (the hex SHA-256 of the admin secret: the
 * task never holds the secret, which its launch settings would show to anyone who may read them),
 * BROWSER_TASK_CHROMIUM (the executable), and
 * optionally BROWSER_TASK_USER_DATA_DIR (a fresh temporary directory otherwise),
 * BROWSER_TASK_CHROMIUM_UID (a user, and group of the same id, for Chromium to run as, whose home is
 * the user data directory: the local provider gives each browser one of its own),
 * BROWSER_TASK_START_URL, BROWSER_TASK_DEVTOOLS_ID (the <id> of the DevTools path, so a launcher
 * that never reads the ready line knows the URL; random otherwise) and BROWSER_TASK_DENIED_PORTS
 * (comma-separated ports no request of Chromium may go to, on any host: the local provider's own
 * unauthenticated listeners on this machine). Once it serves, it writes one
 * JSON line on stdout:
 * `{"ready":{"port":...,"devtools_path":"/devtools/browser/<id>","chromium_pid":...}}`.
 * It reads no arguments: a launcher may add some to tell the process apart by its command line (the
 * local provider names the browser's directory there).
 *
 * When a lease ends, the browser is reset for the next holder: one fresh page at the start URL, every
 * other page and every context the holder made closed. The default context's cookies and storage
 * stay, since the pool's profile is what a browser is reused for.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { baseChromiumFlags } from "../../chromium/flags.ts";
import { browserConnection } from "./browser-connection.ts";
import { cdpPipe } from "./cdp-pipe.ts";
import { deniedRequest, deniedRequestPatterns } from "./denied-requests.ts";
import { leaseProxy } from "./lease-proxy.ts";

const settingsSchema = z.object({
  BROWSER_TASK_HOST: z.string().min(1),
  BROWSER_TASK_PORT: z.coerce.number().int().min(0).max(65_535),
  BROWSER_TASK_ADMIN_SECRET_SHA256: z.string().regex(/^[0-9a-f]{64}$/),
  BROWSER_TASK_CHROMIUM: z.string().min(1),
  BROWSER_TASK_USER_DATA_DIR: z.string().min(1).optional(),
  BROWSER_TASK_CHROMIUM_UID: z.coerce.number().int().min(1).optional(),
  BROWSER_TASK_START_URL: z.string().min(1).optional(),
  BROWSER_TASK_DEVTOOLS_ID: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/).optional(),
  BROWSER_TASK_DENIED_PORTS: z
    .string()
    .regex(/^\d+(,\d+)*$/)
    .transform((ports) => ports.split(",").map(Number))
    .pipe(z.array(z.number().int().min(1).max(65_535)))
    .optional(),
});

const startTimeoutMs = 20_000;
const healthTimeoutMs = 5_000;
/** Below the admin call's timeout, so that a reset that fails answers 500 before its caller gives up. */
const resetTimeoutMs = 3_000;

const parsed = settingsSchema.safeParse(process.env);
if (!parsed.success) {
  process.stderr.write(`browser task: bad settings\n${z.prettifyError(parsed.error)}\n`);
  process.exit(2);
}
const settings = parsed.data;
const startUrl = settings.BROWSER_TASK_START_URL ?? "about:blank";

// Chromium runs web pages: it gets none of the entry's own settings, the admin secret least of all.
const chromiumEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("BROWSER_TASK_")));
const userDataDir = settings.BROWSER_TASK_USER_DATA_DIR ?? (await mkdtemp(join(tmpdir(), "browser-task-")));
const chromiumUid = settings.BROWSER_TASK_CHROMIUM_UID;
const chromium = spawn(
  settings.BROWSER_TASK_CHROMIUM,
  [...baseChromiumFlags, "--headless", "--remote-debugging-pipe", `--user-data-dir=${userDataDir}`, startUrl],
  {
    // stdout stays free for the ready line; Chromium's own log goes where the entry's does.
    stdio: ["ignore", "ignore", "inherit", "pipe", "pipe"],
    ...(chromiumUid === undefined ? { env: chromiumEnv } : { uid: chromiumUid, gid: chromiumUid, env: { ...chromiumEnv, HOME: userDataDir } }),
  },
);
const connection = browserConnection((onMessage) => cdpPipe(chromium.stdio[3] as Writable, chromium.stdio[4] as Readable, onMessage));

let stopping = false;
chromium.once("exit", (code, signal) => {
  connection.close(new Error("Chromium exited"));
  if (!stopping) process.stderr.write(`browser task: Chromium exited (${signal ?? `code ${code}`})\n`);
  process.exit(stopping ? 0 : 1);
});
chromium.once("error", (error) => {
  process.stderr.write(`browser task: Chromium did not start: ${error.message}\n`);
  process.exit(1);
});

let server: Server | undefined;
// Handled from the start: a browser stopped while Chromium starts ends at once, not at the
// stop timeout.
function stop(): void {
  stopping = true;
  server?.close();
  server?.closeAllConnections();
  chromium.kill("SIGTERM");
}
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

/** True when Chromium answers a command over the pipe in time. */
async function chromiumUp(timeoutMs: number): Promise<boolean> {
  const answered = connection.call("Browser.getVersion").then(
    () => true,
    () => false,
  );
  return Promise.race([answered, sleep(timeoutMs, false, { ref: false })]);
}

async function pageTargets(): Promise<string[]> {
  const { targetInfos } = (await connection.call("Target.getTargets")) as { targetInfos: { targetId: string; type: string }[] };
  return targetInfos.filter((target) => target.type === "page").map((target) => target.targetId);
}

/**
 * Leaves one fresh page at the start URL and no other, and no browser context but the default one:
 * a context the last holder made holds that holder's cookies. The fresh page comes first, so the
 * browser is never without one. Target.closeTarget answers before the page is gone, and a closing
 * page may still have opened another: the pages are listed again until only the fresh one is left.
 */
async function resetPages(): Promise<void> {
  const { targetId: fresh } = (await connection.call("Target.createTarget", { url: startUrl })) as { targetId: string };
  const { browserContextIds } = (await connection.call("Target.getBrowserContexts")) as { browserContextIds: string[] };
  await Promise.all(browserContextIds.map((browserContextId) => connection.call("Target.disposeBrowserContext", { browserContextId })));
  const deadline = Date.now() + resetTimeoutMs;
  const closing = new Set<string>();
  for (;;) {
    const others = (await pageTargets()).filter((targetId) => targetId !== fresh);
    if (others.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${others.length} pages of the last lease were still open ${resetTimeoutMs} ms into the reset`);
    for (const targetId of others.filter((each) => !closing.has(each))) {
      closing.add(targetId);
      // A page that closed itself meanwhile is refused; one that really stays open fails the deadline.
      connection.call("Target.closeTarget", { targetId }).catch(() => {});
    }
    await sleep(10);
  }
}

/**
 * Fails every request for a file: URL, and every request to a port of BROWSER_TASK_DENIED_PORTS
 * whatever names the host (127.0.0.1, localhost, another loopback address, a DNS name that resolves
 * to one), in every page, frame and worker of every context, redirects included, whoever asks (a
 * client's navigation, a page's own link, frame or fetch, view-source:): the browser runs web pages
 * for its lease's holder, and the machine's files and the service's own listeners are none of
 * theirs. Headless Chromium reads no policy (no URLBlocklist), so the entry intercepts them on a
 * browser-wide session of its own, which no client can address or switch off.
 */
async function refuseLocalRequests(): Promise<void> {
  const deniedPorts = settings.BROWSER_TASK_DENIED_PORTS ?? [];
  const { sessionId } = (await connection.call("Target.attachToBrowserTarget")) as { sessionId: string };
  connection.own(sessionId, (event) => {
    if (event.method !== "Fetch.requestPaused") return;
    const requestId = event.params?.requestId;
    const url = event.params?.request?.url ?? "";
    // A request whose page closed meanwhile cannot be failed any more, nor needs to be.
    const decided = deniedRequest(url, deniedPorts)
      ? connection.call("Fetch.failRequest", { requestId, errorReason: "AccessDenied" }, sessionId)
      : connection.call("Fetch.continueRequest", { requestId }, sessionId);
    decided.catch(() => {});
  });
  await connection.call("Fetch.enable", { patterns: deniedRequestPatterns(deniedPorts) }, sessionId);
}

if (!(await chromiumUp(startTimeoutMs))) {
  process.stderr.write(`browser task: Chromium did not answer over its pipe within ${startTimeoutMs} ms\n`);
  chromium.kill("SIGKILL");
  process.exit(1);
}
await refuseLocalRequests();

const devtoolsPath = `/devtools/browser/${settings.BROWSER_TASK_DEVTOOLS_ID ?? randomUUID()}`;
const proxy = leaseProxy({
  adminSecretSha256: settings.BROWSER_TASK_ADMIN_SECRET_SHA256,
  devtoolsPath,
  connection,
  chromiumUp: () => chromiumUp(healthTimeoutMs),
  resetBrowser: resetPages,
});
server = proxy;
await new Promise<void>((listening) => proxy.listen(settings.BROWSER_TASK_PORT, settings.BROWSER_TASK_HOST, listening));
const { port } = proxy.address() as AddressInfo;
process.stdout.write(`${JSON.stringify({ ready: { port, devtools_path: devtoolsPath, chromium_pid: chromium.pid } })}\n`);

