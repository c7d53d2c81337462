/**
 * Profile download benchmark: a 200 MB tar.zst served by `npm start` (a child process, so its RSS
 * is the gateway's alone), as stored and as `format=tar`, against the `zstd` command line tool
 * decompressing the same file.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { Writable } from "node:stream";
import { zstdDecompressInto } from "#shared/archive/zstd-decoder-thread.ts";
import { storageStateEntry } from "#shared/archive/tar.ts";
import { archives } from "#shared/composition/archives.ts";
import { profileStore } from "#shared/composition/table.ts";
import { loadConfig } from "#shared/config.ts";
import { runningInstance, type RunningInstance } from "../infra/local/running.ts";
import { useStandInCredentials } from "../infra/local/stand-in-credentials.ts";
import { assertLoopback, keepAliveClient } from "./http-client.ts";
import { renderTable } from "./table.ts";

const randomEntryBytes = 8 * 1024 * 1024;
/** 12 x 8 MiB of random data (media in a cache) stays 96 MiB compressed; 38 x 16 MiB of log lines shrink to about 110 MiB. */
const randomEntries = 12;
const compressibleEntryBytes = 16 * 1024 * 1024;
const compressibleEntries = 38;
const runsPerFormat = 3;
const targetCliShare = 0.6;
const targetPeakAboveIdleBytes = 200 * 1024 * 1024;
const localOrg = "local";
const profileName = "bench-download";
const apiKey = "bench-download-api-key-0123456789";

const mebibytes = (bytes: number) => bytes / (1024 * 1024);

/**
 * Log-like lines, as a profile's databases and caches hold: repetitive structure, a random id per
 * line; zstd's default level shrinks them about 5.5x.
 */
function compressibleChunk(bytes: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let line = 0; size < bytes; line++) {
    const id = randomBytes(8).toString("hex");
    const text = `{"id":"${id}","ts":${1_700_000_000_000 + line * 17},"level":"info","route":"/auth/connections/${line % 977}","status":${200 + (line % 5)},"ms":${(line * 7919) % 1000}}\n`;
    lines.push(text);
    size += text.length;
  }
  return Buffer.from(lines.join("")).subarray(0, bytes);
}

/**
 * Writes a profile archive with the tar and zstd tools: storage_state.json first (as the service
 * writes it), then random and compressible entries in turn, sized so the tar.zst is about 200 MB.
 */
async function writeArchive(workDir: string): Promise<{ path: string; compressedBytes: number; tarBytes: number }> {
  const sourceDir = join(workDir, "profile");
  await mkdir(join(sourceDir, "cache"), { recursive: true });
  const storageState = {
    cookies: [{ name: "session", value: "bench", domain: "bench.example", path: "/", expires: -1, httpOnly: true, secure: true, sameSite: "Lax" }],
    origins: [],
  };
  await writeFile(join(sourceDir, storageStateEntry), JSON.stringify(storageState));
  const compressible = compressibleChunk(compressibleEntryBytes);
  for (let entry = 0; entry < randomEntries + compressibleEntries; entry++) {
    const body = entry < randomEntries ? randomBytes(randomEntryBytes) : compressible;
    await writeFile(join(sourceDir, "cache", `entry-${String(entry).padStart(3, "0")}.bin`), body);
  }
  const tarPath = join(workDir, "profile.tar");
  const path = `${tarPath}.zst`;
  run("tar", ["-cf", tarPath, "-C", sourceDir, storageStateEntry, "cache"]);
  run("zstd", ["-q", "--check", tarPath, "-o", path]);
  const tarBytes = (await stat(tarPath)).size;
  await rm(sourceDir, { recursive: true });
  await rm(tarPath);
  return { path, compressedBytes: (await stat(path)).size, tarBytes };
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr.toString()}`);
}

/** The `zstd` tool is the baseline and `curl` the client; both come from Debian when missing. */
function ensureTools(tools: readonly string[]): void {
  const missing = tools.filter((tool) => spawnSync(tool, ["--version"]).status !== 0);
  if (!missing.length) return;
  if (process.getuid?.() !== 0) throw new Error(`missing command line tools: apt-get install -y ${missing.join(" ")}`);
  process.stderr.write(`installing ${missing.join(", ")} from Debian...\n`);
  const installed = spawnSync("bash", ["-c", `apt-get update -qq && apt-get install -y -qq ${missing.join(" ")}`], { stdio: "inherit" });
  if (installed.status !== 0) throw new Error(`apt-get install ${missing.join(" ")} failed`);
}

/** Seconds for the CLI to decompress the file to /dev/null, the best of the runs. */
function cliDecompressSeconds(path: string): number {
  let best = Infinity;
  for (let attempt = 0; attempt < runsPerFormat; attempt++) {
    const started = performance.now();
    run("zstd", ["-d", "-q", "-c", path]);
    best = Math.min(best, (performance.now() - started) / 1000);
  }
  return best;
}

/** The service's own decoder on the same file, no HTTP: what the decompression alone costs. */
async function decoderSeconds(path: string): Promise<number> {
  let best = Infinity;
  for (let attempt = 0; attempt < runsPerFormat; attempt++) {
    const started = performance.now();
    await zstdDecompressInto(createReadStream(path, { highWaterMark: 1024 * 1024 }), new Writable({ write: (_chunk, _encoding, done) => done() }));
    best = Math.min(best, (performance.now() - started) / 1000);
  }
  return best;
}

/** `npm start` itself, with the Node flags its script sets; the service's own pid is in running.json. */
async function startService(dataDir: string): Promise<{ child: ChildProcess; running: RunningInstance }> {
  const child = spawn("npm", ["start", "--silent"], {
    env: { ...process.env, PORT: "0", DATA_DIR: dataDir, LOCAL_API_KEY: apiKey, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    if (output.includes("listening on")) {
      const running = runningInstance(dataDir);
      if (running?.s3Endpoint && running.dynamoEndpoint) return { child, running };
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  child.kill("SIGTERM");
  throw new Error("npm start did not come up within 120 s");
}

function processMemory(pid: number): { rssBytes: number; peakBytes: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kilobytes = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rssBytes: kilobytes("VmRSS"), peakBytes: kilobytes("VmHWM") };
}

/** Writing 5 to clear_refs resets VmHWM to the current RSS, so each run's peak is its own. */
async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, "5");
}

/**
 * Downloads to /dev/null with curl, as the CLI baseline writes to /dev/null: a client in this Node
 * process would take its share of the 2 cores from the service it measures.
 */
function download(url: string): { bytes: number; seconds: number } {
  const result = spawnSync("curl", ["-sS", "-o", "/dev/null", "-H", `authorization: Bearer ${apiKey}`, "-w", "%{http_code} %{size_download} %{time_total}", url]);
  const [status, bytes, seconds] = result.stdout.toString().split(" ").map(Number);
  if (result.status !== 0 || status !== 200) throw new Error(`GET ${url}: curl exit ${result.status}, HTTP ${status}: ${result.stderr.toString()}`);
  return { bytes: bytes ?? Number.NaN, seconds: seconds ?? Number.NaN };
}

interface FormatFigures {
  format: string;
  bytes: number;
  seconds: number;
  idleRssBytes: number;
  peakAboveIdleBytes: number;
}

async function measureFormat(running: RunningInstance, pid: number, format: "tar.zst" | "tar"): Promise<FormatFigures> {
  const url = `${running.url}/profiles/${profileName}/download?format=${format}`;
  let best: FormatFigures | undefined;
  let worstPeakAboveIdle = 0;
  for (let run = 0; run < runsPerFormat; run++) {
    await resetPeak(pid);
    const idle = processMemory(pid);
    const { bytes, seconds } = download(url);
    const after = processMemory(pid);
    worstPeakAboveIdle = Math.max(worstPeakAboveIdle, after.peakBytes - idle.rssBytes);
    if (!best || seconds < best.seconds) best = { format, bytes, seconds, idleRssBytes: idle.rssBytes, peakAboveIdleBytes: 0 };
  }
  if (!best) throw new Error("no run");
  return { ...best, peakAboveIdleBytes: worstPeakAboveIdle };
}

export async function downloadBench(): Promise<string> {
  ensureTools(["zstd", "curl"]);
  const workDir = await mkdtemp(join(tmpdir(), "bench-download-"));
  let service: { child: ChildProcess; running: RunningInstance } | undefined;
  try {
    process.stderr.write("writing a 200 MB tar.zst profile archive...\n");
    const archive = await writeArchive(workDir);
    process.stderr.write("starting npm start in a child process...\n");
    service = await startService(join(workDir, "data"));
    const { running } = service;
    assertLoopback(running.url);
    const { pid } = running;

    const client = keepAliveClient(running.url, { bearer: apiKey, maxSockets: 1 });
    const created = await client.send("POST", "/profiles", { name: profileName });
    client.close();
    if (created.status !== 201) throw new Error(`creating the profile: HTTP ${created.status}`);
    // Far past what an import takes once decompressed (maxDecompressedArchiveBytes), so it goes
    // straight into the store: a download streams any stored archive, whatever its size.
    process.stderr.write("storing it straight into the archive store...\n");
    useStandInCredentials();
    const config = loadConfig({ ...process.env, DEPLOYMENT_MODE: "local", DYNAMODB_ENDPOINT: running.dynamoEndpoint, S3_ENDPOINT: running.s3Endpoint });
    const profileId = (JSON.parse(created.body.toString()) as { id: string }).id;
    const archiveBytes = await readFile(archive.path);
    await archives(config).put(localOrg, profileId, "tar.zst", archiveBytes);
    await profileStore(config).setArchive(localOrg, profileId, { kind: "tar.zst", size: archiveBytes.length, saved_at: new Date().toISOString() });

    process.stderr.write("downloading...\n");
    const stored = await measureFormat(running, pid, "tar.zst");
    const tar = await measureFormat(running, pid, "tar");
    if (stored.bytes !== archive.compressedBytes) throw new Error(`as stored: ${stored.bytes} bytes, expected ${archive.compressedBytes}`);
    if (tar.bytes !== archive.tarBytes) throw new Error(`format=tar: ${tar.bytes} bytes, expected ${archive.tarBytes}`);
    const cliSeconds = cliDecompressSeconds(archive.path);
    const decoderOnlySeconds = await decoderSeconds(archive.path);

    const tarOutputRate = mebibytes(tar.bytes) / tar.seconds;
    const cliOutputRate = mebibytes(archive.tarBytes) / cliSeconds;
    const share = tarOutputRate / cliOutputRate;
    const rows = [
      [
        "as stored (tar.zst)",
        mebibytes(stored.bytes).toFixed(0),
        stored.seconds.toFixed(2),
        (mebibytes(stored.bytes) / stored.seconds).toFixed(0),
        mebibytes(stored.idleRssBytes).toFixed(0),
        mebibytes(stored.peakAboveIdleBytes).toFixed(1),
      ],
      [
        "format=tar",
        mebibytes(tar.bytes).toFixed(0),
        tar.seconds.toFixed(2),
        tarOutputRate.toFixed(0),
        mebibytes(tar.idleRssBytes).toFixed(0),
        mebibytes(tar.peakAboveIdleBytes).toFixed(1),
      ],
      ["zstd -d (CLI)", mebibytes(archive.tarBytes).toFixed(0), cliSeconds.toFixed(2), cliOutputRate.toFixed(0), "-", "-"],
      [
        "service decoder, no HTTP",
        mebibytes(archive.tarBytes).toFixed(0),
        decoderOnlySeconds.toFixed(2),
        (mebibytes(archive.tarBytes) / decoderOnlySeconds).toFixed(0),
        "-",
        "-",
      ],
    ];
    const worstPeak = Math.max(stored.peakAboveIdleBytes, tar.peakAboveIdleBytes);
    return [
      "",
      `Profile download: ${mebibytes(archive.compressedBytes).toFixed(0)} MiB tar.zst (${mebibytes(archive.tarBytes).toFixed(0)} MiB as tar), best of ${runsPerFormat} runs, through npm start on loopback, downloaded by curl to /dev/null`,
      "",
      renderTable(["download", "MiB out", "seconds", "MiB/s out", "idle RSS MiB", "peak above idle MiB"], rows),
      "",
      `format=tar throughput: ${(share * 100).toFixed(0)}% of the zstd CLI (target >= ${targetCliShare * 100}%): ${share >= targetCliShare ? "yes" : "NO"}`,
      `peak RSS above idle, worst run: ${mebibytes(worstPeak).toFixed(1)} MiB (target < ${mebibytes(targetPeakAboveIdleBytes)} MiB): ${worstPeak < targetPeakAboveIdleBytes ? "yes" : "NO"}`,
      "- the gateway process is `npm start` itself (gateway, handlers, s3rver on a worker thread); its peak is /proc VmHWM, reset before each run.",
      "- 'service decoder, no HTTP' is zstdDecompressInto (the download's decoder thread) from the file to nowhere: the decompression's share of the download time.",
      "",
    ].join("\n");
  } finally {
    if (service && service.child.exitCode === null) {
      // npm does not pass the signal on: the service itself stops, and npm exits with it.
      process.kill(service.running.pid, "SIGTERM");
      await once(service.child, "exit");
    }
    await rm(workDir, { recursive: true, force: true });
  }
}
