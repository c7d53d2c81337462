import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import type { BrowserProvider, LaunchedBrowser, LaunchSpec } from "./provider.ts";

export interface LocalChromiumOptions {
  /** One directory per browser lives here (profile, log, pid), so a restarted process finds leftovers. */
  root: string;
  /**
   * Where the Chromium that `@sparticuz/chromium` ships is unpacked (made 0700). The package reuses
   * whatever its path already holds, so it must be a directory of ours alone, never the machine's
   * shared /tmp.
   */
  unpackDir: string;
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

const profileFlag = (dir: string) => `--user-data-dir=${profileDir(dir)}`;

/** The command line, state and process group of a live or zombie process; undefined once it is gone. */
async function processInfo(pid: number): Promise<{ args: string[]; state: string; group: number } | undefined> {
  try {
    const [cmdline, stat] = await Promise.all([readFile(`/proc/${pid}/cmdline`, "utf8"), readFile(`/proc/${pid}/stat`, "utf8")]);
    // After the command name: state, parent pid, process group.
    const [state = "", , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { args: cmdline.split("\0"), state, group: Number(group) };
  } catch {
    return undefined;
  }
}

/** True while `pid` is the browser started on `dir` (and not a zombie, nor a process that reused the pid). */
async function isRunning(pid: number, dir: string): Promise<boolean> {
  const info = await processInfo(pid);
  return info !== undefined && info.state !== "Z" && info.args.includes(profileFlag(dir));
}

/** Live processes started with the profile in `dir` (a browser whose pid was never written included). */
async function processesUsing(dir: string): Promise<{ pid: number; group: number }[]> {
  const pids = (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry)).map(Number);
  const found = await Promise.all(pids.map(async (pid) => ({ pid, info: await processInfo(pid) })));
  return found.flatMap(({ pid, info }) =>
    info && info.state !== "Z" && info.args.includes(profileFlag(dir)) ? [{ pid, group: info.group }] : [],
  );
}

const unpackScript = join(import.meta.dirname, "unpack-chromium.ts");

/**
 * `@sparticuz/chromium` unpacks into os.tmpdir() and has no option for the place, so the unpacking
 * runs in a child process whose TMPDIR is `dir`; this process's own TMPDIR stays as it is.
 */
async function unpackedChromium(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves the mode of a directory that already exists as it was.
  await chmod(dir, 0o700);
  const { stdout } = await promisify(execFile)(process.execPath, [unpackScript], { env: { ...process.env, TMPDIR: dir } });
  return stdout;
}

/**
 * Headless Chromium processes on this machine, each in its own process group so that one kill
 * ends the browser with its zygote, renderers and utility processes.
 */
export function localChromium(options: LocalChromiumOptions): BrowserProvider {
  let executable: Promise<string> | undefined;
  /** Directories of launches in progress here: they have no pid file yet, and are not leftovers. */
  const launching = new Set<string>();

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

  /** Ends whatever still runs on `dir` (a browser whose pid file was never written included), then removes it. */
  async function endLeftover(dir: string): Promise<void> {
    for (const { pid, group } of await processesUsing(dir)) {
      try {
        // A browser leads its own process group: ending the group ends its helpers with it.
        process.kill(group === pid ? -pid : pid, "SIGKILL");
      } catch {
        // Ended on its own meanwhile.
      }
    }
    await rm(dir, { recursive: true, force: true });
  }

  async function launchIn(dir: string, spec: LaunchSpec, executable: Promise<string>): Promise<LaunchedBrowser> {
    await mkdir(profileDir(dir), { recursive: true });
    // stderr goes to a file rather than a pipe: the browser outlives a restart of this process.
    const logFile = await open(join(dir, "browser.log"), "a");
    const child = spawn(await executable, [...launchFlags, profileFlag(dir), spec.startUrl ?? "about:blank"], {
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
  }

  return {
    async launch(spec: LaunchSpec) {
      executable ??= options.executable ? Promise.resolve(options.executable) : unpackedChromium(options.unpackDir);
      const dir = join(options.root, spec.sessionId);
      launching.add(dir);
      try {
        return await launchIn(dir, spec, executable);
      } finally {
        launching.delete(dir);
      }
    },

    destroy,

    /**
     * Also clears what a previous run left: directories of browsers that died, and those of launches
     * a crash cut short before the pid file was written (ending the browser if it had started).
     */
    async running() {
      const entries = await readdir(options.root, { withFileTypes: true }).catch(() => []);
      const found = await Promise.all(
        entries
          .filter((entry) => entry.isDirectory())
          .map(async (entry) => {
            const dir = join(options.root, entry.name);
            if (launching.has(dir)) return undefined;
            const recorded = await readFile(join(dir, "browser.json"), "utf8")
              .then((text) => JSON.parse(text) as { pid: number })
              .catch(() => undefined);
            if (recorded && (await isRunning(recorded.pid, dir))) return toRef(recorded.pid, dir);
            await endLeftover(dir);
            return undefined;
          }),
      );
      return found.filter((ref): ref is string => ref !== undefined);
    },
  };
}
