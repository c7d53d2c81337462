import { readdir, readFile } from "node:fs/promises";

/**
 * Processes on this machine told apart by what /proc says of them: their command line, state and
 * start time, so a pid reused by a later process is not mistaken for the one that had it.
 */

/**
 * The command line, state, process group and start time (clock ticks after boot) of a live or
 * zombie process; undefined once it is gone.
 */
export async function processInfo(pid: number): Promise<{ args: string[]; state: string; group: number; startTime: number } | undefined> {
  try {
    const [cmdline, stat] = await Promise.all([readFile(`/proc/${pid}/cmdline`, "utf8"), readFile(`/proc/${pid}/stat`, "utf8")]);
    // After the command name come the fields from the third on: state, parent pid, process group, ...
    // and the start time as the twenty-second.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { args: cmdline.split("\0"), state: fields[0] ?? "", group: Number(fields[2]), startTime: Number(fields[19]) };
  } catch (error) {
    // Only a process that is gone answers "gone": any other failure (out of file handles, say) is no
    // reason to think a browser dead and remove the directory it still runs on.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ESRCH") return undefined;
    throw error;
  }
}

/** A process told apart, by its start time, from a later one given the same pid. */
export interface ProcessIdentity {
  pid: number;
  startTime: number;
}

export async function thisProcess(): Promise<ProcessIdentity> {
  const info = await processInfo(process.pid);
  if (!info) throw new Error("/proc does not show this process");
  return { pid: process.pid, startTime: info.startTime };
}

export async function isAlive(owner: ProcessIdentity): Promise<boolean> {
  const info = await processInfo(owner.pid);
  return info !== undefined && info.state !== "Z" && info.startTime === owner.startTime;
}

/**
 * A dot-name for a directory being prepared, naming its owner so that a crash's remnant can be told
 * from another process's work in progress.
 */
export const ownedName = (prefix: string, owner: ProcessIdentity) => `.${prefix}-${owner.pid}-${owner.startTime}-`;

export function ownerInName(prefix: string, name: string): ProcessIdentity | undefined {
  const match = new RegExp(`^\\.${prefix}-(\\d+)-(\\d+)-`).exec(name);
  return match ? { pid: Number(match[1]), startTime: Number(match[2]) } : undefined;
}

/** A live process (not a zombie) whose command line `matches`. */
export function runsWith(info: { args: string[]; state: string } | undefined, matches: (args: string[]) => boolean): boolean {
  return info !== undefined && info.state !== "Z" && matches(info.args);
}

/** Live processes whose command line `matches` (those whose pid was never written included). */
export async function processesWhere(matches: (args: string[]) => boolean): Promise<{ pid: number; group: number; startTime: number }[]> {
  const pids = (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry)).map(Number);
  const found = await Promise.all(pids.map(async (pid) => ({ pid, info: await processInfo(pid) })));
  return found.flatMap(({ pid, info }) => (info && runsWith(info, matches) ? [{ pid, group: info.group, startTime: info.startTime }] : []));
}

/** Live processes started with `arg` on their command line, such as a browser's profile flag. */
export const processesWith = (arg: string) => processesWhere((args) => args.includes(arg));
