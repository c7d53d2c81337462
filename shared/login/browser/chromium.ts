import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";

/**
 * The flags the login engine's Chromium runs with, chosen here rather than taken from
 * `@sparticuz/chromium`'s defaults: those include `--disable-web-security`, which would let any page
 * read every other site's data in a browser that holds the user's sessions.
 */
const loginFlags = [
  // Lambda runs as root without user namespaces, where Chromium's sandboxes cannot start.
  "--no-sandbox",
  "--disable-setuid-sandbox",
  "--no-zygote",
  "--disable-gpu",
  "--no-first-run",
  "--no-default-browser-check",
  "--no-pings",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-domain-reliability",
  "--disable-sync",
  // QUIC would leave the proxy that enforces the network policy.
  "--disable-quic",
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

/**
 * A headless Chromium for one login flow; the caller closes it when the flow ends. Its temporary
 * files go to a directory of its own, removed once it is gone however it ended: a browser killed
 * mid-way leaves files behind that nothing else would remove.
 */
export async function launchLoginBrowser(options: LoginBrowserOptions): Promise<Browser> {
  // Imported here: the functions that run this engine also check HTTP logins, which need no browser.
  const { chromium } = await import("playwright-core");
  const scratch = await mkdtemp(join(tmpdir(), "acs-login-browser-"));
  const browser = await chromium
    .launch({
      executablePath: options.executablePath,
      headless: true,
      args: loginBrowserFlags(),
      env: { ...process.env, TMPDIR: scratch },
      // `<-loopback>` takes away Chromium's own exception for loopback, so those requests meet the policy too.
      ...(options.proxyServer ? { proxy: { server: options.proxyServer, bypass: "<-loopback>" } } : {}),
    })
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
