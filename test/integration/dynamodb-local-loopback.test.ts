import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localClient, startDynamoDbLocal, type DynamoDbLocal } from "../../infra/local/dynamodb-local.ts";

interface ListeningSocket {
  address: string;
  port: number;
}

/** Bytes of a /proc/net address: the kernel prints each 32-bit word in host (little-endian) order. */
function addressBytes(hex: string): number[] {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const wordBytes = hex.slice(word, word + 8).match(/../g) as string[];
    bytes.push(...wordBytes.reverse().map((byte) => Number.parseInt(byte, 16)));
  }
  return bytes;
}

function formatAddress(bytes: number[]): string {
  if (bytes.length === 4) return bytes.join(".");
  const isV4Mapped = bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (isV4Mapped) return `::ffff:${bytes.slice(12).join(".")}`;
  const groups = Array.from({ length: 8 }, (_, group) => ((bytes[group * 2] as number) * 256 + (bytes[group * 2 + 1] as number)).toString(16));
  return groups.join(":");
}

function isLoopback(address: string): boolean {
  return /^127\./.test(address) || /^::ffff:127\./.test(address) || address === "0:0:0:0:0:0:0:1";
}

/** The LISTEN rows (state 0A) for `port` in this process's network namespace, IPv4 and IPv6. */
function listeningSockets(port: number): ListeningSocket[] {
  const found: ListeningSocket[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").trim().split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/) as [string, string, string, string];
      const [addressHex, portHex] = local.split(":") as [string, string];
      if (state === "0A" && Number.parseInt(portHex, 16) === port) {
        found.push({ address: formatAddress(addressBytes(addressHex)), port });
      }
    }
  }
  return found;
}

/** The JVM of the DynamoDB Local whose database lives in `dir`. */
function dynamoDbLocalPid(dir: string): number {
  const pids = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
        return args[0] === "java" && args.includes(dir);
      } catch {
        return false;
      }
    });
  expect(pids).toHaveLength(1);
  return Number(pids[0]);
}

async function answers(endpoint: string): Promise<boolean> {
  const client = localClient(endpoint);
  try {
    return Array.isArray((await client.send(new ListTablesCommand({}))).TableNames);
  } finally {
    client.destroy();
  }
}

describe("DynamoDB Local, as the tests and npm start run it", () => {
  let dataDir: string;
  let persisted: DynamoDbLocal;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "acs-dynamo-loopback-"));
    persisted = await startDynamoDbLocal({ dataDir });
  });

  afterAll(async () => {
    await persisted?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each([
    ["in memory (the tests' shared one)", () => inject("dynamoEndpoint")],
    ["persisted under a data dir (npm start's)", () => persisted.endpoint],
  ])("%s listens on loopback only", async (_mode, endpoint) => {
    const port = Number(new URL(endpoint()).port);
    const sockets = listeningSockets(port);
    expect(sockets.length).toBeGreaterThan(0);
    for (const socket of sockets) expect(isLoopback(socket.address), `${socket.address}:${socket.port}`).toBe(true);
    expect(await answers(endpoint())).toBe(true);
  });

  it("keeps the JVM in a network namespace whose only interface is loopback", () => {
    const pid = dynamoDbLocalPid(dataDir);
    expect(readlinkSync(`/proc/${pid}/ns/net`)).not.toBe(readlinkSync("/proc/self/ns/net"));
    const interfaces = readFileSync(`/proc/${pid}/net/dev`, "utf8")
      .trim()
      .split("\n")
      .slice(2)
      .map((line) => line.split(":")[0]?.trim());
    expect(interfaces).toEqual(["lo"]);
  });
});
