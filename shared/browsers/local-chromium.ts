import { spawn } from "node:child_process";
import { mkdir, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { BrowserProvider, LaunchSpec } from "./provider.ts";

export interface LocalChromiumOptions {
  /** One directory per browser lives here (profile, log, pid), so a restarted process finds leftovers. */
  root: string;
  /** Another Chromium than the one `@sparticuz/chromium` ships. */
  executable?: string;
}

const launchFlags = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--remote-debugging-address=127.0.0.1",
  "--remote-debugging-port=0",
];

const launchTimeoutMs = 20_000;
const exitTimeoutMs = 5_000;

/** The ref names the process and its directory: the pid alone could be reused by another process. */
function toRef(pid: number, dir: string): string {
  return `${pid}@${dir}`;
}

function parseRef(ref: string): { pid: number; dir: string } {
  const at = ref.indexOf("@");
  return { pid: Number(ref.slice(0, at)), dir: ref.slice(at + 1) };
}

const profileDir = (dir: string) => join(dir, "profile");

/** True while `pid` is the browser started on `dir` (and not a zombie, nor a process that reused the pid). */
async function isRunning(pid: number, dir: string): Promise<boolean> {
  try {
    const [cmdline, stat] = await Promise.all([readFile(`/proc/${pid}/cmdline`, "utf8"), readFile(`/proc/${pid}/stat`, "utf8")]);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && cmdline.split("\0").includes(`--user-data-dir=${profileDir(dir)}`);
  } catch {
    return false;
  }
}

async function defaultExecutable(): Promise<string> {
  const { default: chromium } = await import("@sparticuz/chromium");
  return chromium.executablePath();
}

/**
 * Headless Chromium processes on this machine, each in its own process group so that one kill
 * ends the browser with its zygote, renderers and utility processes.
 */
export function localChromium(options: LocalChromiumOptions): BrowserProvider {
  let executable: Promise<string> | undefined;

  async function destroy(ref: string): Promise<void> {
    const { pid, dir } = parseRef(ref);
    if (await isRunning(pid, dir)) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone between the check and the kill.
      }
      const deadline = Date.now() + exitTimeoutMs;
      while ((await isRunning(pid, dir)) && Date.now() < deadline) await sleep(10);
    }
    await rm(dir, { recursive: true, force: true });
  }

  /** Chromium writes the port and browser path of its DevTools endpoint into this file once it listens. */
  async function devToolsUrl(pid: number, dir: string): Promise<string> {
    const deadline = Date.now() + launchTimeoutMs;
    for (;;) {
      const lines = await readFile(join(profileDir(dir), "DevToolsActivePort"), "utf8").then(
        (text) => text.split("\n"),
        () => [],
      );
      if (lines.length >= 2 && lines[1]) return `ws://127.0.0.1:${lines[0]}${lines[1]}`;
      if (!(await isRunning(pid, dir))) {
        const logText = await readFile(join(dir, "browser.log"), "utf8").catch(() => "");
        throw new Error(`Chromium exited during launch: ${logText.slice(-500)}`);
      }
      if (Date.now() > deadline) throw new Error(`Chromium did not open its DevTools endpoint within ${launchTimeoutMs} ms`);
      await sleep(10);
    }
  }

  return {
    async launch(spec: LaunchSpec) {
      executable ??= options.executable ? Promise.resolve(options.executable) : defaultExecutable();
      const dir = join(options.root, spec.sessionId);
      await mkdir(profileDir(dir), { recursive: true });
      // stderr goes to a file rather than a pipe: the browser outlives a restart of this process.
      const logFile = await open(join(dir, "browser.log"), "a");
      const child = spawn(await executable, [...launchFlags, `--user-data-dir=${profileDir(dir)}`, spec.startUrl ?? "about:blank"], {
        detached: true,
        stdio: ["ignore", "ignore", logFile.fd],
      });
      const spawned = new Promise<number>((started, failed) => {
        child.once("spawn", () => started(child.pid as number));
        child.once("error", failed);
      });
      await logFile.close();
      const pid = await spawned.catch(async (error: unknown) => {
        await rm(dir, { recursive: true, force: true });
        throw error;
      });
      child.unref();
      const ref = toRef(pid, dir);
      await writeFile(join(dir, "browser.json"), JSON.stringify({ pid, session_id: spec.sessionId }));
      try {
        return { ref, cdpWsUrl: await devToolsUrl(pid, dir), headless: true };
      } catch (error) {
        await destroy(ref);
        throw error;
      }
    },

    destroy,

    /** Also clears the directories that browsers which died left behind. */
    async running() {
      const entries = await readdir(options.root, { withFileTypes: true }).catch(() => []);
      const found = await Promise.all(
        entries
          .filter((entry) => entry.isDirectory())
          .map(async (entry) => {
            const dir = join(options.root, entry.name);
            const recorded = await readFile(join(dir, "browser.json"), "utf8").then(
              (text) => JSON.parse(text) as { pid: number },
              () => undefined,
            );
            // A directory without its pid file is a launch still being set up.
            if (!recorded) return undefined;
            if (await isRunning(recorded.pid, dir)) return toRef(recorded.pid, dir);
            await rm(dir, { recursive: true, force: true });
            return undefined;
          }),
      );
      return found.filter((ref): ref is string => ref !== undefined);
    },
  };
}
