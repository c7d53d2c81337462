import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page, Response } from "playwright-core";
import { baseChromiumFlags } from "../../chromium/flags.ts";
import { isAlive, ownedName, ownerInName, processesWith, thisProcess } from "../../chromium/processes.ts";
import { log } from "../../log.ts";

/**
 * The flags the login engine's Chromium runs with beside the service's base flags, chosen here rather
 * than taken from `@sparticuz/chromium`'s defaults: those include `--disable-web-security`, which
 * would let any page read every other site's data in a browser that holds the user's sessions.
 */
const loginFlags = [
  ...baseChromiumFlags,
  // Without user namespaces (Lambda) neither the setuid sandbox nor the zygote can start.
  "--disable-setuid-sandbox",
  "--no-zygote",
  "--no-default-browser-check",
  "--no-pings",
  "--disable-domain-reliability",
  // WebRTC sends STUN and TURN over UDP straight to any address a page names, around the proxy that
  // enforces the network policy: this keeps it to TCP through the proxy, with no UDP at all.
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--disk-cache-size=33554432",
];

const lambdaFlags = [
  // A renderer process of its own cannot start there (no PR_SET_NO_NEW_PRIVS), so everything runs in one.
  "--single-process",
  // Lambda's /dev/shm is too small for a page's shared memory; Chromium then keeps it in TMPDIR.
  "--disable-dev-shm-usage",
];

export interface LoginBrowserOptions {
  executablePath: string;
  /** The forward proxy every request of the browser goes through (`http://127.0.0.1:<port>`). */
  proxyServer?: string;
}

export function loginBrowserFlags(inLambda = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME)): string[] {
  return inLambda ? [...loginFlags, ...lambdaFlags] : [...loginFlags];
}

/** A browser's scratch directory in os.tmpdir() is named for the process that launched it. */
const scratchPrefix = "acs-login-browser";

/** Playwright makes the profile of a browser from `chromium.launch` in os.tmpdir(), with no option to place it. */
const playwrightProfilePrefix = "playwright_chromiumdev_profile-";

/** No login browser lives longer: a flow ends at 14 minutes, and a browser its step lost closes itself after 15. */
const loginBrowserLifetimeMs = 15 * 60_000;

let leftoversSwept: Promise<void> | undefined;

/**
 * Removes what the browsers of a process killed mid-flow left in os.tmpdir(), which outlives the
 * process (Lambda keeps /tmp across a timeout): scratch directories whose launching process is gone,
 * and Playwright's profiles older than any login browser lives that no running process uses. Another
 * live process's directories stay, whoever made them.
 */
async function sweepLeftovers(): Promise<void> {
  const root = tmpdir();
  const entries = await readdir(root, { withFileTypes: true });
  await Promise.all(
    entries
      .filter((entry) => entry.isDirectory())
      .map(async (entry) => {
        const path = join(root, entry.name);
        const owner = ownerInName(scratchPrefix, entry.name);
        const left = owner ? !(await isAlive(owner)) : entry.name.startsWith(playwrightProfilePrefix) && (await isAbandonedProfile(path));
        if (left) await rm(path, { recursive: true, force: true });
      }),
  );
}

async function isAbandonedProfile(path: string): Promise<boolean> {
  // Gone already: another process's sweep removed it.
  const modified = await stat(path).then((stats) => stats.mtimeMs, () => undefined);
  if (modified === undefined || Date.now() - modified < loginBrowserLifetimeMs) return false;
  return (await processesWith(`--user-data-dir=${path}`)).length === 0;
}

/**
 * A headless Chromium for one login flow; the caller closes it when the flow ends. Its temporary
 * files (Chromium's, and Playwright's traces and downloads) go to a directory of its own, removed
 * once it is gone however it ended; the first launch in a process removes those that processes
 * killed mid-flow left behind.
 */
export async function launchLoginBrowser(options: LoginBrowserOptions): Promise<Browser> {
  // Imported here: the functions that run this engine also check HTTP logins, which need no browser.
  const { chromium } = await import("playwright-core");
  // Leftovers only take space: failing to remove them is no reason to fail a login.
  leftoversSwept ??= sweepLeftovers().catch((error: unknown) => log.warn("leftover login browser files could not be removed", { error: error instanceof Error ? error.name : "unknown" }));
  await leftoversSwept;
  const scratch = await mkdtemp(join(tmpdir(), ownedName(scratchPrefix, await thisProcess())));
  const artifactsDir = join(scratch, "playwright");
  const browser = await mkdir(artifactsDir)
    .then(() =>
      chromium.launch({
        executablePath: options.executablePath,
        headless: true,
        args: loginBrowserFlags(),
        env: { ...process.env, TMPDIR: scratch },
        artifactsDir,
        // `<-loopback>` takes away Chromium's own exception for loopback, so those requests meet the policy too.
        ...(options.proxyServer ? { proxy: { server: options.proxyServer, bypass: "<-loopback>" } } : {}),
      }),
    )
    .catch(async (error: unknown) => {
      await rm(scratch, { recursive: true, force: true });
      throw error;
    });
  browser.on("disconnected", () => void rm(scratch, { recursive: true, force: true }));
  return browser;
}

/** Playwright's TimeoutError, told by its name so that this module need not load playwright-core to check it. */
export function isTimeout(error: unknown): error is Error {
  return error instanceof Error && error.name === "TimeoutError";
}

/** How long a page may take to load, in the engine and in the health check alike. */
export const navigationTimeoutMs = 20_000;

/** A main-frame navigation (`goto`, `reload`) that did not end in an answer within `timeoutMs`; `cause` is Playwright's error. */
export class NavigationError extends Error {
  readonly url: string;
  readonly timeoutMs: number;
  constructor(url: string, timeoutMs: number, cause: unknown) {
    // The URL stays out of the message: its query may carry a token.
    super("the page did not load", { cause });
    this.name = "NavigationError";
    this.url = url;
    this.timeoutMs = timeoutMs;
  }
}

/** How long a navigation may take: `navigationTimeoutMs`, or less where a step's deadline says so. */
export interface NavigationOptions {
  timeoutMs?: number;
}

/** `page.goto`, its failures told apart from every other error of the browser. */
export async function navigate(
  page: Page,
  url: string,
  { timeoutMs = navigationTimeoutMs, ...options }: NavigationOptions & { waitUntil?: "load" | "domcontentloaded" } = {},
): Promise<Response | null> {
  try {
    return await page.goto(url, { timeout: timeoutMs, ...options });
  } catch (error) {
    throw new NavigationError(url, timeoutMs, error);
  }
}

/** `page.reload`, its failures told apart as `navigate`'s are. */
export async function reload(page: Page, { timeoutMs = navigationTimeoutMs }: NavigationOptions = {}): Promise<Response | null> {
  const url = page.url();
  try {
    return await page.reload({ timeout: timeoutMs });
  } catch (error) {
    throw new NavigationError(url, timeoutMs, error);
  }
}

/**
 * Why a navigation failed when the site could not be reached (a network error, the timeout), as
 * `<host> could not be reached (net::ERR_...)`; null for a failure of the browser itself.
 */
export function unreachableReason(failure: NavigationError): string | null {
  const url = new URL(failure.url);
  if (isTimeout(failure.cause)) return `${url.host} did not load ${url.pathname} within ${failure.timeoutMs} ms`;
  const netError = failure.cause instanceof Error ? /net::ERR_[A-Z0-9_]+/.exec(failure.cause.message) : null;
  return netError ? `${url.host} could not be reached (${netError[0]})` : null;
}
