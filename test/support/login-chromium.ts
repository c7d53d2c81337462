import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { unpackedChromium } from "#shared/browsers/local-chromium.ts";
import { launchLoginBrowser } from "#shared/login/browser/chromium.ts";
import type { OpenBrowser } from "#shared/login/browser/probe.ts";

/** The browser process's id, as the browser itself reports it over CDP. */
export async function browserPid(browser: Browser): Promise<number> {
  const session = await browser.newBrowserCDPSession();
  const { processInfo } = (await session.send("SystemInfo.getProcessInfo")) as { processInfo: Array<{ type: string; id: number }> };
  await session.detach();
  const main = processInfo.find((each) => each.type === "browser");
  if (!main) throw new Error("the browser reported no browser process");
  return main.id;
}

/** A live process's parent and command line, or undefined once it is gone (or left a zombie). */
function liveProcess(pid: number | string): { parent: number; args: string[] } | undefined {
  try {
    const [state, parent] = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").at(-1)!.split(" ");
    if (state === "Z") return undefined;
    return { parent: Number(parent), args: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean) };
  } catch {
    return undefined;
  }
}

/** The process's command line, or undefined once it is gone (or left a zombie). */
export function commandLineOf(pid: number): string[] | undefined {
  return liveProcess(pid)?.args;
}

/**
 * The login engine's Chromium for a test file: `BROWSER_EXECUTABLE`, or the packaged one unpacked
 * into a directory of the file's own. Every browser it opens is remembered by pid, so the file can
 * check at the end that none outlived its test.
 */
export async function loginChromiumForTests() {
  const unpackDir = process.env.BROWSER_EXECUTABLE ? undefined : await mkdtemp(join(tmpdir(), "acs-login-chromium-"));
  const executablePath = process.env.BROWSER_EXECUTABLE ?? (await unpackedChromium(unpackDir as string));
  const pids: number[] = [];

  async function launch(): Promise<Browser> {
    const browser = await launchLoginBrowser({ executablePath });
    pids.push(await browserPid(browser));
    return browser;
  }

  const openBrowser: OpenBrowser = async () => {
    const browser = await launch();
    return { browser, close: () => browser.close() };
  };

  return {
    executablePath,
    launch,
    openBrowser,
    /** Browsers this file opened whose process still runs. */
    running: () => pids.filter((pid) => commandLineOf(pid) !== undefined),
    async dispose() {
      for (const pid of pids) if (commandLineOf(pid) !== undefined) process.kill(pid, "SIGKILL");
      if (unpackDir && existsSync(unpackDir)) await rm(unpackDir, { recursive: true, force: true });
    },
  };
}

/** Chromium browser processes (not their helpers) this test process started, through the service or itself. */
export function chromiumChildren(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      const found = liveProcess(pid);
      return found?.parent === process.pid && found.args.includes("--remote-debugging-pipe") && !found.args.some((arg) => arg.startsWith("--type="));
    })
    .map(Number);
}
