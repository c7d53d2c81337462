/**
 * Connections API benchmark: each route through the local gateway against the raw backend calls
 * that route makes (its floor), on the same in-memory DynamoDB Local. The floor's calls run on
 * this thread, where the gateway and handlers run; the route's clients on a thread of their own.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { cpus, loadavg } from "node:os";
import { defaultSettings } from "#shared/domain/connection.ts";
import { newConnection } from "#shared/domain/connections.ts";
import { executionName, firstExecutionInput } from "#shared/domain/workflow.ts";
import { resourceName } from "#shared/config.ts";
import { services } from "#shared/services.ts";
import { insertConnectionItems, markWorkflowStartedUpdate } from "#shared/store/connections-store.ts";
import { executionArn } from "#shared/step-functions/engine.ts";
import { indexKeys, keys } from "#shared/store/keys.ts";
import { tableDefinition } from "#shared/store/table.ts";
import { localOrg, type LocalStack } from "../infra/local/stack.ts";
import { assertLoopback, expectStatus, keepAliveClient, type KeepAliveClient } from "./http-client.ts";
import { combinedRuns, failureLines, roundRobin, runLoad, type LoadResult } from "./load.ts";
import { profileOfWorker, startRouteClients, uniqueDomain, type ConnectionsFixture, type RouteScenario } from "./route-clients.ts";
import { summarize, type LatencySummary } from "./stats.ts";
import { renderTable } from "./table.ts";

/** The org of the stack's API key, so the floor reads and writes where the routes do. */
const org = localOrg;
const concurrency = 8;
const profileCount = 8;
/** 8 x 32 = 256 connections in the org: the list route pages over at least 200. */
const seededConnectionsPerProfile = 32;
const listLimit = 20;
const targetRatio = 2;
const measuredSeconds = secondsFromEnv("BENCH_SECONDS", 10);
/** Lets the JVM behind DynamoDB Local and V8 compile each path before it is measured. */
const warmupSeconds = secondsFromEnv("BENCH_WARMUP_SECONDS", 2);
/** The measured seconds of each side are split into this many rounds, route and floor in turn. */
const rounds = 5;

type Operation = (worker: number) => Promise<void>;

interface ScenarioFigures {
  name: string;
  route: LatencySummary;
  floor: LatencySummary;
}

interface FailedRun {
  label: string;
  result: LoadResult;
}

function secondsFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`${name} must be a positive number of seconds, got '${raw}'`);
  return seconds;
}

/** The profiles, and connections to get and list, created through the API as a user would. */
async function seed(client: KeepAliveClient): Promise<ConnectionsFixture> {
  const profileNames = Array.from({ length: profileCount }, (_, index) => `bench-profile-${index}`);
  const idsPerProfile = await Promise.all(
    profileNames.map(async (profileName) => {
      const ids: string[] = [];
      for (let index = 0; index < seededConnectionsPerProfile; index++) {
        const reply = await client.send("POST", "/auth/connections", { domain: uniqueDomain("seed"), profile_name: profileName });
        const created = JSON.parse(expectStatus(reply, 201).body.toString("utf8")) as { id: string };
        ids.push(created.id);
      }
      return ids;
    }),
  );
  return { profileNames, connectionIds: idsPerProfile.flat() };
}

/** The backend calls each route makes once its API key is cached, sent directly. */
function floorOperations(db: DynamoDBDocumentClient, sfn: SFNClient, tableName: string, fixture: ConnectionsFixture): Record<RouteScenario, Operation> {
  const stateMachineArn = resourceName(services().config, "STATE_MACHINE_ARN");
  const nextConnectionId = roundRobin(fixture.connectionIds);
  const byOrg = tableDefinition.indexes.byOrg;
  return {
    async create(worker) {
      const profileName = profileOfWorker(fixture, worker);
      const guard = await db.send(new GetCommand({ TableName: tableName, Key: keys.profileName(org, profileName), ConsistentRead: true }));
      const profileId = guard.Item?.profile_id as string | undefined;
      if (!profileId) throw new Error(`profile '${profileName}' has no name guard`);
      const connection = newConnection({
        org,
        profile: { id: profileId, name: profileName },
        domain: uniqueDomain("f"),
        settings: defaultSettings,
        createdAt: new Date().toISOString(),
        executionArnOf: (name) => executionArn(stateMachineArn, name),
      });
      await db.send(new TransactWriteCommand({ TransactItems: insertConnectionItems(tableName, connection) }));
      const name = executionName(connection.id, 0);
      await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(firstExecutionInput(connection, { timeScale: 1 })) }));
      // The route's mark that its workflow started, whose condition catches a delete racing the start.
      await db.send(new UpdateCommand(markWorkflowStartedUpdate(tableName, org, connection.id, executionArn(stateMachineArn, name))));
    },
    async get() {
      const id = nextConnectionId();
      const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.connection(org, id), ConsistentRead: true }));
      if (!result.Item) throw new Error(`connection '${id}' not found`);
    },
    async list() {
      const page = await db.send(new QueryCommand({
        TableName: tableName,
        IndexName: byOrg.name,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": byOrg.partitionKey },
        ExpressionAttributeValues: { ":pk": indexKeys.connectionsOfOrg(org) },
        ScanIndexForward: false,
        // The route asks for one more than the page to learn whether there is a next one.
        Limit: listLimit + 1,
      }));
      const items = page.Items ?? [];
      if (items.length !== listLimit + 1) throw new Error(`expected ${listLimit + 1} items, got ${items.length}`);
    },
  };
}

/**
 * The route and its floor in alternating rounds, after a warm-up of each: measured one after the
 * other, the second would run on a JVM and a V8 the first had warmed further (DynamoDB Local's
 * calls keep getting faster for a while under load), and on whatever the machine did meanwhile.
 */
async function measureScenario(
  stack: LocalStack,
  name: RouteScenario,
  floor: Operation,
  fixture: ConnectionsFixture,
  failedRuns: FailedRun[],
): Promise<ScenarioFigures> {
  process.stderr.write(`measuring ${name}: route and floor in ${rounds} alternating rounds...\n`);
  const clients = startRouteClients({ url: stack.url, apiKey: stack.apiKey, scenario: name, fixture, concurrency, listLimit });
  const floorRun = (durationMs: number) => runLoad({ concurrency, durationMs }, floor);
  try {
    noteFailures(`${name} route (warm-up)`, await clients.run(warmupSeconds * 1000), failedRuns);
    noteFailures(`${name} floor (warm-up)`, await floorRun(warmupSeconds * 1000), failedRuns);
    const routeRuns: LoadResult[] = [];
    const floorRuns: LoadResult[] = [];
    for (let round = 0; round < rounds; round++) {
      routeRuns.push(await clients.run((measuredSeconds * 1000) / rounds));
      floorRuns.push(await floorRun((measuredSeconds * 1000) / rounds));
    }
    return { name, route: summarizedRuns(`${name} route`, routeRuns, failedRuns), floor: summarizedRuns(`${name} floor`, floorRuns, failedRuns) };
  } finally {
    await clients.stop();
  }
}

function noteFailures(label: string, result: LoadResult, failedRuns: FailedRun[]): void {
  if (result.failures) failedRuns.push({ label, result });
}

function summarizedRuns(label: string, runs: readonly LoadResult[], failedRuns: FailedRun[]): LatencySummary {
  const measured = combinedRuns(runs);
  noteFailures(label, measured, failedRuns);
  return summarize(measured.latenciesMs, measured.elapsedMs);
}

const milliseconds = (value: number) => value.toFixed(2);
const perSecond = (value: number) => value.toFixed(0);

function report(figures: readonly ScenarioFigures[], failedRuns: readonly FailedRun[], loadBeforeRun: number): string {
  const header = ["route", "req/s", "p50 ms", "p99 ms", "floor req/s", "floor p50", "floor p99", "p50 ratio", `within ${targetRatio}x`];
  const rows = figures.map(({ name, route, floor }) => {
    // Rounded up, so a ratio shown as 2.00x is never one that missed the target.
    const ratio = Math.ceil((route.p50Ms / floor.p50Ms) * 100) / 100;
    return [
      name,
      perSecond(route.perSecond),
      milliseconds(route.p50Ms),
      milliseconds(route.p99Ms),
      perSecond(floor.perSecond),
      milliseconds(floor.p50Ms),
      milliseconds(floor.p99Ms),
      `${ratio.toFixed(2)}x`,
      ratio <= targetRatio ? "yes" : "NO",
    ];
  });
  const lines = [
    "",
    "Connections API: route vs floor (the raw backend calls the route makes)",
    `machine: ${cpus().length} CPUs, node ${process.version}; ${concurrency} concurrent clients, ` +
      `${measuredSeconds} s measured for each route and each floor, in ${rounds} rounds taken in turn, after ${warmupSeconds} s warm-up of each`,
    // Client, service and DynamoDB Local compete for the same cores, so other work skews the ratios.
    `1-minute load average before the run: ${loadBeforeRun.toFixed(2)}`,
    "",
    renderTable(header, rows),
    "",
    `target: route p50 within ${targetRatio}x of its floor's p50`,
    "notes:",
    "- create = POST /auth/connections (new domain, existing profile); floor: GetItem of the profile name guard,",
    "  TransactWriteItems of connection + guard + profile connection_count, StartExecution of its workflow",
    "  (local Step Functions endpoint), GetItem read-back.",
    `- get = GET /auth/connections/{id}; floor: one consistent GetItem. list = GET ?limit=${listLimit} over ` +
      `${profileCount * seededConnectionsPerProfile}+ connections; floor: one Query on ${tableDefinition.indexes.byOrg.name}, Limit ${listLimit + 1}.`,
    "- the authorizer's API key lookup is cached in-process, so it is not part of the floor (nor of the route once warm).",
    "- gateway, handlers and the floor's calls share this process's main thread; the route's clients run on a thread of",
    "  their own (a user's clients are other machines). DynamoDB Local (Java) runs on the same machine.",
  ];
  lines.push(...failureLines(failedRuns));
  return `${lines.join("\n")}\n`;
}

/** The figures as a printable report, and whether any call failed. */
export async function connectionsBench(stack: LocalStack): Promise<{ report: string; failed: boolean }> {
  const loadBeforeRun = loadavg()[0] ?? Number.NaN;
  const client = keepAliveClient(stack.url, { bearer: stack.apiKey, maxSockets: concurrency });
  // Plain SDK clients with the SDK's defaults: the floor is what the calls cost without the service.
  const dynamodb = new DynamoDBClient({ region: "us-east-1", endpoint: stack.dynamoEndpoint });
  const db = DynamoDBDocumentClient.from(dynamodb);
  const sfn = new SFNClient({ region: "us-east-1", endpoint: stack.sfnEndpoint });
  try {
    assertLoopback(stack.url);
    assertLoopback(stack.dynamoEndpoint);
    assertLoopback(stack.sfnEndpoint);
    process.stderr.write(`seeding ${profileCount} profiles with ${seededConnectionsPerProfile} connections each...\n`);
    const fixture = await seed(client);
    const floors = floorOperations(db, sfn, stack.tableName, fixture);
    const failedRuns: FailedRun[] = [];
    const figures: ScenarioFigures[] = [];
    // Reads first, so the list pages over the seeded org before the creates make it much larger.
    for (const name of ["get", "list", "create"] as const) figures.push(await measureScenario(stack, name, floors[name], fixture, failedRuns));
    return { report: report(figures, failedRuns, loadBeforeRun), failed: failedRuns.length > 0 };
  } finally {
    client.close();
    dynamodb.destroy();
    sfn.destroy();
  }
}
