import { execFile, spawn } from "node:child_process";
import { createHmac, randomInt } from "node:crypto";
import { access, chmod, chown, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { findPackageJSON } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { readOrCreateKey } from "../secrets/local-key-file.ts";
import type { BrowserProvider, LaunchedBrowser, LaunchSpec } from "../domain/browser-provider.ts";
import { isAlive, ownedName, ownerInName, processesWhere, processInfo, runsWith, thisProcess, type ProcessIdentity } from "../chromium/processes.ts";
import { sha256Hex } from "./task/digest.ts";
import { leaseCall, type LeaseChange } from "./task/lease-call.ts";

export interface LocalChromiumOptions {
  /**
   * One directory per browser lives here (profile, log, pid, launcher and the entry's address), and
   * the key its admin secrets derive from, so a restarted process finds leftovers and can still end
   * a lease.
   */
  root: string;
  /**
   * Where the Chromium that `@sparticuz/chromium` ships is unpacked, one directory per package
   * version (this one made 0711: browsers running as users of their own pass through it to run
   * Chromium, and only this service may list or write it). The package reuses whatever its path
   * already holds, so it must be a directory of ours alone, never the machine's shared /tmp.
   */
  unpackDir: string;
  /** Another Chromium than the one `@sparticuz/chromium` ships. */
  executable?: string;
  /**
   * The ports of this service's own listeners that answer without authentication (its database and
   * object store stand-ins, say): no request of a browser may go to them, on any host.
   */
  deniedPorts?: readonly number[];
}

/** Each browser runs behind its own browser-task entry, which the provider launches and tracks. */
const entryScript = join(import.meta.dirname, "task", "entry.ts");

/**
 * The entry's command line, which names the browser's directory (the entry does not read it): from
 * its first moment, before browser.json records its pid and before it starts Chromium, the entry of
 * a directory can be found by what anyone may read of a process. Its environment names the
 * directory too, but is not readable everywhere.
 */
const entryArgs = (dir: string) => [entryScript, `--browser-dir=${dir}`];

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

/** Command lines of what runs on `dir`: its entry's, and its Chromium's (whose entry may be gone). */
const entryOn = (dir: string) => (args: string[]) => entryArgs(dir).every((arg) => args.includes(arg));
const chromiumOn = (dir: string) => (args: string[]) => args.includes(profileFlag(dir));

/**
 * The key each entry's admin secret derives from, readable by this service alone (its user, mode
 * 0600): a restarted service derives the secrets of the browsers it launched before, and no browser
 * holds any, its own included, in a file it could read.
 */
const adminKeyFile = (root: string) => join(root, ".admin-key");

/**
 * Each browser's Chromium runs as a user of its own when the service runs as root: a uid picked at
 * random from a range no distribution hands out (and no other browser of the root uses), with no
 * name, owning the browser's profile alone. It cannot read the service's data nor another browser's
 * profile, nor signal or trace another browser's processes.
 */
const browserUids = { first: 0x7000_0000, count: 0x0100_0000 };

/**
 * Why pooled browsers cannot run each as a user of its own here, or undefined where they do. Without
 * that, a browser's Chromium runs as the service's user and could read whatever it can. A browser's
 * user must be able to pass through every directory above `paths` (the browsers' root, Chromium's
 * directory): those the service makes it opens itself, the others it leaves as they are.
 */
export async function browserIsolationProblem(paths: string[]): Promise<string | undefined> {
  if (process.getuid?.() !== 0) {
    return `pooled browsers run as this service's user (uid ${process.getuid?.()}), not each as a user of its own, which takes running the service as root`;
  }
  for (const path of paths) {
    for (let above = dirname(resolve(path)); ; above = dirname(above)) {
      const mode = await stat(above).then(
        (found) => found.mode,
        () => undefined,
      );
      if (mode !== undefined && (mode & 0o001) === 0) {
        return `pooled browsers cannot run each as a user of its own: such a user cannot pass through ${above} (mode ${(mode & 0o777).toString(8)}) to reach ${path}; make it 0711 or keep the data elsewhere`;
      }
      if (above === dirname(above)) break;
    }
  }
  return undefined;
}

/** The uid of the user a browser's Chromium runs as: the owner of its profile. */
async function browserUidOf(dir: string): Promise<number | undefined> {
  return stat(profileDir(dir)).then(
    (profile) => profile.uid,
    () => undefined,
  );
}

/** A uid of the range that no browser under `root` runs as. */
async function unusedBrowserUid(root: string): Promise<number> {
  const entries = await readdir(root, { withFileTypes: true });
  const used = new Set(await Promise.all(entries.filter((entry) => entry.isDirectory()).map((entry) => browserUidOf(join(root, entry.name)))));
  for (;;) {
    const uid = browserUids.first + randomInt(browserUids.count);
    if (!used.has(uid)) return uid;
  }
}

/**
 * Gives the browser's profile to a user of its own and leaves the rest of its directory (its pid,
 * address and log) to the service: the directory and the root are open to pass through, not to list.
 */
async function isolate(dir: string): Promise<number> {
  const uid = await unusedBrowserUid(dirname(dir));
  await chown(profileDir(dir), uid, uid);
  await chmod(profileDir(dir), 0o700);
  await chmod(dir, 0o711);
  await chmod(dirname(dir), 0o711);
  return uid;
}

/** The entry's stdout, where it announces its port and DevTools path once it serves. */
const entryOutputFile = (dir: string) => join(dir, "entry.out");

const exists = (path: string) => access(path).then(() => true, () => false);

/** What browser.json says of the browser launched in `dir`, once the launch has written it. */
async function recordedBrowser(dir: string): Promise<{ pid: number; startTime?: number } | undefined> {
  return readFile(join(dir, "browser.json"), "utf8").then(
    (text) => JSON.parse(text) as { pid: number; startTime?: number },
    () => undefined,
  );
}

/**
 * True while `pid` is the entry started on `dir` (and not a zombie, nor a process that reused the
 * pid). Known by its start time where the launch recorded one, which a process cannot change, and
 * otherwise by its command line.
 */
async function isRunning(pid: number, dir: string): Promise<boolean> {
  const [info, recorded] = await Promise.all([processInfo(pid), recordedBrowser(dir)]);
  if (recorded?.pid === pid && recorded.startTime !== undefined) {
    return info !== undefined && info.state !== "Z" && info.startTime === recorded.startTime;
  }
  return runsWith(info, entryOn(dir));
}

/**
 * Prepares `target` in a fresh directory whose name says this process owns it, then renames it into
 * place: a crash mid-way leaves only that dot-named remnant, which its owner's death marks as one.
 */
async function prepareThenRename(target: string, prefix: string, prepare: (fresh: string, owner: ProcessIdentity) => Promise<void>): Promise<void> {
  const owner = await thisProcess();
  const fresh = await mkdtemp(join(dirname(target), ownedName(prefix, owner)));
  try {
    await prepare(fresh, owner);
    await rename(fresh, target);
  } catch (error) {
    await rm(fresh, { recursive: true, force: true });
    throw error;
  }
}

const unpackScript = join(import.meta.dirname, "unpack-chromium.ts");

/** Where `@sparticuz/chromium` puts its binary inside the directory it unpacks into. */
const executableName = "chromium";

async function chromiumPackageVersion(): Promise<string> {
  const manifest = findPackageJSON("@sparticuz/chromium", import.meta.url);
  if (!manifest) throw new Error("@sparticuz/chromium is not installed");
  return (JSON.parse(await readFile(manifest, "utf8")) as { version: string }).version;
}

/**
 * The package's Chromium, unpacked once per package version under `root`. The package reuses any
 * binary already at its path, whole or not, so each unpack starts in a fresh directory and is
 * renamed to the version's name only once complete: a crash mid-way leaves no half binary under
 * that name, and an upgrade unpacks anew.
 */
export async function unpackedChromium(root: string): Promise<string> {
  await mkdir(root, { recursive: true, mode: 0o711 });
  // mkdir leaves the mode of a directory that already exists as it was.
  await chmod(root, 0o711);
  const versionDir = join(root, await chromiumPackageVersion());
  if (!(await exists(versionDir))) await unpackInto(versionDir);
  // The package makes the directory (a temporary one) and the binary 0700, and each browser's own user must run them.
  await chmod(versionDir, 0o755);
  await chmod(join(versionDir, executableName), 0o755);
  await removeOtherUnpacks(root, basename(versionDir));
  return join(versionDir, executableName);
}

/**
 * The package unpacks into os.tmpdir() and has no option for the place, so the unpacking runs in a
 * child process whose TMPDIR is the fresh directory; this process's own TMPDIR stays as it is.
 */
async function unpackInto(versionDir: string): Promise<void> {
  await prepareThenRename(versionDir, "unpacking", async (fresh) => {
    const { stdout } = await promisify(execFile)(process.execPath, [unpackScript], { env: { ...process.env, TMPDIR: fresh } });
    if (stdout !== join(fresh, executableName)) throw new Error(`@sparticuz/chromium unpacked its binary to ${stdout}, not ${join(fresh, executableName)}`);
  }).catch((error: unknown) => {
    // Another process renamed its complete unpack of the same version into place first.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
  });
}

/** Earlier versions and unpacks a crash cut short; another process's unpack in progress stays. */
async function removeOtherUnpacks(root: string, current: string): Promise<void> {
  for (const entry of await readdir(root)) {
    const owner = ownerInName("unpacking", entry);
    if (entry === current || (owner && (await isAlive(owner)))) continue;
    await rm(join(root, entry), { recursive: true, force: true });
  }
}

/** Names the process that launches in a directory, from before the directory has its name. */
const launcherFile = (dir: string) => join(dir, "launcher.json");

async function launcherAlive(dir: string): Promise<boolean> {
  const launcher = await readFile(launcherFile(dir), "utf8")
    .then((text) => JSON.parse(text) as ProcessIdentity)
    .catch(() => undefined);
  return launcher !== undefined && (await isAlive(launcher));
}

/**
 * Creates `dir` already holding the name of its launcher (this process): a pass of any provider on
 * the same root, in this process or another, then leaves the launch alone until browser.json says
 * which browser runs there, and treats it as a leftover once its launcher is gone.
 */
async function claim(dir: string): Promise<void> {
  await mkdir(dirname(dir), { recursive: true });
  // Until the rename, the directory's own name says whose it is.
  await prepareThenRename(dir, "launching", (fresh, launcher) => writeFile(launcherFile(fresh), JSON.stringify(launcher), { mode: 0o600 }));
}

interface EntryReady {
  port: number;
  devtools_path: string;
  chromium_pid: number;
}

/** Parses the entry's ready line, once it has written it. */
async function entryReady(dir: string): Promise<EntryReady | undefined> {
  // Only whole lines: the last piece may be a line still being written.
  const lines = await readFile(entryOutputFile(dir), "utf8").then(
    (text) => text.split("\n").slice(0, -1),
    () => [],
  );
  for (const line of lines) {
    const ready = line.startsWith("{") ? (JSON.parse(line) as { ready?: EntryReady }).ready : undefined;
    if (ready) return ready;
  }
  return undefined;
}

/** Waits for `running` to turn false, which a SIGKILL makes it do within moments. */
async function awaitExit(running: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + exitTimeoutMs;
  while (await running()) {
    if (Date.now() > deadline) throw new Error(`${what} did not exit within ${exitTimeoutMs} ms of SIGKILL`);
    await sleep(10);
  }
}

/**
 * What the entry runs on: only the settings it needs and the basics of a process. The service's
 * own environment (its keys for the stand-ins, say) has no business in a browser that runs web pages.
 */
function entryEnvironment(
  dir: string,
  spec: LaunchSpec,
  executable: string,
  adminSecret: string,
  chromiumUid: number | undefined,
  deniedPorts: readonly number[],
): NodeJS.ProcessEnv {
  const basics = Object.fromEntries(["PATH", "HOME", "TMPDIR", "LANG", "TZ"].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
  return {
    ...basics,
    BROWSER_TASK_HOST: "127.0.0.1",
    BROWSER_TASK_PORT: "0",
    BROWSER_TASK_ADMIN_SECRET_SHA256: sha256Hex(adminSecret),
    BROWSER_TASK_CHROMIUM: executable,
    BROWSER_TASK_USER_DATA_DIR: profileDir(dir),
    ...(chromiumUid === undefined ? {} : { BROWSER_TASK_CHROMIUM_UID: String(chromiumUid) }),
    ...(spec.startUrl === null ? {} : { BROWSER_TASK_START_URL: spec.startUrl }),
    ...(deniedPorts.length === 0 ? {} : { BROWSER_TASK_DENIED_PORTS: deniedPorts.join(",") }),
  };
}

/**
 * Headless Chromium browsers on this machine, each behind its own browser-task entry (the only way
 * in, and only with the lease's token). The entry leads its own process group, which Chromium and
 * its zygote, renderers and utility processes share, so one kill ends the whole browser.
 */
export function localChromium(options: LocalChromiumOptions): BrowserProvider {
  let executable: Promise<string> | undefined;
  let adminKey: Promise<Buffer> | undefined;
  let isolated: Promise<boolean> | undefined;

  /** The entry's admin secret, derived anew wherever it is needed rather than kept anywhere. */
  async function adminSecretOf(dir: string): Promise<string> {
    adminKey ??= readOrCreateKey(adminKeyFile(options.root)).catch((error: unknown) => {
      adminKey = undefined;
      throw error;
    });
    return createHmac("sha256", await adminKey).update(`browser entry admin: ${basename(dir)}`).digest("base64url");
  }

  /** The entry's Chromium, known by its start time from now on, while it still runs on `dir`. */
  async function chromiumOf(dir: string): Promise<ProcessIdentity | undefined> {
    const ready = await entryReady(dir);
    const info = ready && (await processInfo(ready.chromium_pid));
    return ready && info && runsWith(info, chromiumOn(dir)) ? { pid: ready.chromium_pid, startTime: info.startTime } : undefined;
  }

  async function destroy(ref: string): Promise<void> {
    const { pid, dir } = parseRef(ref);
    if (await isRunning(pid, dir)) {
      const [chromium, entry] = await Promise.all([chromiumOf(dir), processInfo(pid)]);
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone between the check and the kill.
      }
      // The directory stays on a timeout, so that a later pass finds the browser again and ends it
      // then. Awaited by its start time: an exiting process's command line is empty before it is gone.
      if (entry) await awaitExit(() => isAlive({ pid, startTime: entry.startTime }), `the browser entry ${pid}`);
      // Chromium died by the same kill, but may take a moment longer than the entry to exit.
      if (chromium) await awaitExit(() => isAlive(chromium), `Chromium ${chromium.pid}`);
    }
    await rm(dir, { recursive: true, force: true });
  }

  /** The entry writes its port and DevTools path on stdout once it serves. */
  async function devToolsUrl(pid: number, dir: string): Promise<string> {
    const deadline = Date.now() + launchTimeoutMs;
    for (;;) {
      const ready = await entryReady(dir);
      if (ready) return `ws://127.0.0.1:${ready.port}${ready.devtools_path}`;
      if (!(await isRunning(pid, dir))) {
        const logText = await readFile(join(dir, "browser.log"), "utf8").catch(() => "");
        throw new Error(`the browser exited during launch: ${logText.slice(-500)}`);
      }
      if (Date.now() > deadline) throw new Error(`the browser's entry did not serve within ${launchTimeoutMs} ms`);
      await sleep(10);
    }
  }

  /**
   * Ends whatever still runs on `dirs` (an entry whose pid file was never written, or a Chromium
   * whose entry is gone, included), waits for it to exit, then removes the directories. One scan of
   * the processes serves every directory: a scan reads two files of each process at once, and one
   * per directory, when many browsers end together, would run out of file handles.
   */
  async function endLeftovers(dirs: string[]): Promise<void> {
    if (dirs.length === 0) return;
    const found = await processesWhere((args) => dirs.some((dir) => entryOn(dir)(args) || chromiumOn(dir)(args)));
    for (const { pid, group } of found) {
      try {
        // An entry leads its own process group (so does a Chromium started on its own), which its helpers share.
        process.kill(group === pid ? -pid : pid, "SIGKILL");
      } catch {
        // Ended on its own meanwhile.
      }
    }
    await Promise.all(found.map(({ pid, startTime }) => awaitExit(() => isAlive({ pid, startTime }), `the browser's process ${pid}`)));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }

  /** Starts the entry in a claimed `dir` and answers its pid and start time once it runs. */
  async function start(dir: string, spec: LaunchSpec, executable: string): Promise<ProcessIdentity> {
    await mkdir(profileDir(dir));
    const adminSecret = await adminSecretOf(dir);
    isolated ??= browserIsolationProblem([options.root, executable]).then((problem) => problem === undefined);
    const chromiumUid = (await isolated) ? await isolate(dir) : undefined;
    // Files rather than pipes: the browser outlives a restart of this process.
    const [output, logFile] = await Promise.all([open(entryOutputFile(dir), "a", 0o600), open(join(dir, "browser.log"), "a", 0o600)]);
    try {
      const child = spawn(process.execPath, entryArgs(dir), {
        detached: true,
        stdio: ["ignore", output.fd, logFile.fd],
        env: entryEnvironment(dir, spec, executable, adminSecret, chromiumUid, options.deniedPorts ?? []),
      });
      const pid = await new Promise<number>((started, failed) => {
        child.once("spawn", () => started(child.pid as number));
        child.once("error", failed);
      });
      child.unref();
      // Read at once: the process cannot exit unreaped, so the pid is still the entry's.
      const info = await processInfo(pid);
      if (!info) throw new Error("the browser's entry exited as it started");
      return { pid, startTime: info.startTime };
    } finally {
      await Promise.all([output.close(), logFile.close()]);
    }
  }

  async function launchIn(dir: string, spec: LaunchSpec, executable: string): Promise<LaunchedBrowser> {
    await claim(dir);
    const { pid, startTime } = await start(dir, spec, executable).catch(async (error: unknown) => {
      await endLeftovers([dir]);
      throw error;
    });
    const ref = toRef(pid, dir);
    try {
      await writeFile(join(dir, "browser.json"), JSON.stringify({ pid, startTime, session_id: spec.sessionId }), { mode: 0o600 });
      return { ref, cdpWsUrl: await devToolsUrl(pid, dir), headless: true };
    } catch (error) {
      await destroy(ref);
      throw error;
    }
  }

  async function entryLeaseCall(dir: string, change: LeaseChange): Promise<void> {
    const [adminSecret, ready] = await Promise.all([adminSecretOf(dir), entryReady(dir)]);
    if (!ready) throw new Error("the browser's entry has not announced its port");
    await leaseCall(`http://127.0.0.1:${ready.port}`, adminSecret, change, "the browser's entry");
  }

  return {
    async launch(spec: LaunchSpec) {
      executable ??= options.executable ? Promise.resolve(options.executable) : unpackedChromium(options.unpackDir);
      return launchIn(join(options.root, spec.sessionId), spec, await executable);
    },

    destroy,

    async grantLease(ref, lease) {
      await entryLeaseCall(parseRef(ref).dir, { grant: lease });
    },

    async endLease(ref, leaseId) {
      const { pid, dir } = parseRef(ref);
      // A browser that is gone admits no one.
      if (await isRunning(pid, dir)) await entryLeaseCall(dir, { end: leaseId });
    },

    /**
     * Also clears what a previous run left: directories of browsers that died, and those of launches
     * whose launcher is gone before the pid file was written (ending the browser if it had started).
     * A launch still in progress, here or in another process, is left alone.
     */
    async running() {
      const entries = await readdir(options.root, { withFileTypes: true }).catch(() => []);
      const found = await Promise.all(
        entries
          .filter((entry) => entry.isDirectory())
          .map(async (entry): Promise<{ running: string } | { leftover: string } | undefined> => {
            const dir = join(options.root, entry.name);
            const claimer = ownerInName("launching", entry.name);
            if (claimer) {
              if (!(await isAlive(claimer))) await rm(dir, { recursive: true, force: true });
              return undefined;
            }
            const recorded = await recordedBrowser(dir);
            if (recorded) {
              if (await isRunning(recorded.pid, dir)) return { running: toRef(recorded.pid, dir) };
            } else if (await launcherAlive(dir)) {
              return undefined;
            }
            return { leftover: dir };
          }),
      );
      await endLeftovers(found.flatMap((each) => (each && "leftover" in each ? [each.leftover] : [])));
      return found.flatMap((each) => (each && "running" in each ? [each.running] : []));
    },
  };
}
