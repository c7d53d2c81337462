import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, UpdateTimeToLiveCommand } from "@aws-sdk/client-dynamodb";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTableInput, tableDefinition } from "#shared/store/table.ts";

export interface DynamoDbLocal {
  endpoint: string;
  /** SIGTERM unless told otherwise (a test's SIGKILL stands in for a crash). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const isolatedScript = resolve(import.meta.dirname, "dynamodb-local-netns.ts");

/** Installs Debian's package for a missing command when we can, otherwise says how. */
function ensureCommand(command: string, debianPackage: string): void {
  if (hasCommand(command)) return;
  const canInstall = process.getuid?.() === 0 && hasCommand("apt-get");
  if (!canInstall) {
    throw new Error(`DynamoDB Local needs ${command}: install it with \`sudo apt-get install -y ${debianPackage}\``);
  }
  process.stderr.write(`${command} not found: installing ${debianPackage} with apt-get...\n`);
  execFileSync("apt-get", ["update"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", debianPackage], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

function hasCommand(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts AWS's DynamoDB Local: in memory, or persisted under `dataDir` across restarts. Only this
 * machine can reach it: it runs in a network namespace of its own (see dynamodb-local-netns.ts),
 * behind a socket on 127.0.0.1 that this process opens and hands over.
 */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number } = {}): Promise<DynamoDbLocal> {
  ensureCommand("java", "default-jre-headless");
  ensureCommand("unshare", "util-linux");
  ensureCommand("ip", "iproute2");
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  const listener = createServer();
  await new Promise<void>((listening, failed) => {
    listener.once("error", failed);
    listener.listen(options.port ?? 0, "127.0.0.1", listening);
  });
  const { port } = listener.address() as AddressInfo;
  // Its own process group, so that one signal reaches DynamoDB Local and the relay alike.
  const child = spawn("unshare", ["--user", "--map-root-user", "--net", "--", process.execPath, isolatedScript, JSON.stringify({ path })], {
    detached: true,
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-2000)));
  const exited = new Promise<void>((done) => {
    child.once("exit", () => done());
    child.once("error", (error) => {
      errors += error.message;
      done();
    });
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // Ended on its own meanwhile.
    }
  };
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (listener.listening) listener.close();
    if (child.exitCode === null && child.signalCode === null) {
      signalGroup(signal);
      await exited;
    }
  };
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    const relaying = new Promise<"relaying">((done) => child.once("message", () => done("relaying")));
    child.send("listen", listener, (error) => {
      if (error) signalGroup("SIGKILL");
    });
    if ((await Promise.race([relaying, exited])) !== "relaying") {
      throw new Error(
        `DynamoDB Local could not start in a network namespace of its own: ${errors.trim() || `exit code ${child.exitCode}`}\n` +
          "It needs unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 (where it exists), user.max_user_namespaces > 0, " +
          "and on Ubuntu 23.10+ kernel.apparmor_restrict_unprivileged_userns=0; in a container, a seccomp profile that allows unshare. Root outside such a container also works.",
      );
    }
    // The relay accepts on the handed-over socket now; this process's copy would only compete.
    listener.close();
    await waitUntilServing(endpoint, child);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, stop };
}

async function waitUntilServing(endpoint: string, child: { exitCode: number | null }): Promise<void> {
  const client = localClient(endpoint);
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}`);
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not start within 60 s: ${String(error)}`);
        await sleep(100);
      }
    }
  } finally {
    client.destroy();
  }
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: "us-east-1", maxAttempts: 1 });
}

/** Creates the service table as CDK defines it, unless it is already there. */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    try {
      await client.send(new DescribeTableCommand({ TableName: tableName }));
      return;
    } catch (error) {
      if ((error as { name?: string }).name !== "ResourceNotFoundException") throw error;
    }
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
      }),
    );
  } finally {
    client.destroy();
  }
}
