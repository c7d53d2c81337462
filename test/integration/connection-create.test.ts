import { DescribeExecutionCommand, ExecutionDoesNotExist, ListExecutionsCommand, type SFNClient } from "@aws-sdk/client-sfn";
import { GetCommand, ScanCommand, TransactWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { targetPolicy, workflowTiming } from "#shared/composition/config.ts";
import { loginRoutes } from "#shared/composition/login-routes.ts";
import { workflowEngine } from "#shared/composition/workflow-engine.ts";
import { connectionLifecycleCore, newConnection } from "#shared/domain/connections.ts";
import { defaultSettings } from "#shared/domain/connection.ts";
import { ConflictError, ServiceUnavailableError } from "#shared/domain/errors.ts";
import { executionName, type WorkflowEngine } from "#shared/domain/workflow.ts";
import { dynamoConnectionStore } from "#shared/store/connections-store.ts";
import { dynamoCredentialStore } from "#shared/store/credentials-store.ts";
import { dynamoProfileStore } from "#shared/store/profiles-store.ts";
import { officialSfnClient } from "../support/official-sfn.ts";
import { servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let sfn: SFNClient;

beforeAll(async () => {
  core = await servicesOnFreshTable();
  sfn = officialSfnClient(core.stack.sfnEndpoint);
});

afterAll(async () => {
  await core?.stack.stop();
});

/** The real workflow engine, whose starts fail while `down` is set: Step Functions unreachable, or the process gone. */
function engineWithOutage() {
  const real = workflowEngine(core.config);
  const engine = {
    down: true,
    starts: 0,
    port: {
      ...real,
      async start(name, input) {
        engine.starts++;
        if (engine.down) throw new ServiceUnavailableError("injected: Step Functions is unreachable");
        return real.start(name, input);
      },
    } satisfies WorkflowEngine as WorkflowEngine,
  };
  return engine;
}

/** The table client with a fault: `fault` answers the commands it picks instead of DynamoDB Local. */
function tableWithFault(fault: (command: unknown) => Promise<unknown> | undefined): DynamoDBDocumentClient {
  return { send: (command: unknown) => fault(command) ?? core.db.send(command as never) } as unknown as DynamoDBDocumentClient;
}

function lifecycle(options: { workflow?: WorkflowEngine; db?: DynamoDBDocumentClient } = {}) {
  const db = options.db ?? core.db;
  return connectionLifecycleCore({
    connections: dynamoConnectionStore(db, core.tableName),
    profiles: dynamoProfileStore(db, core.tableName),
    credentials: dynamoCredentialStore(db, core.tableName),
    policy: targetPolicy(core.config),
    workflow: options.workflow ?? workflowEngine(core.config),
    timing: workflowTiming(core.config),
  });
}

async function itemsOfOrg(org: string) {
  const scan = await core.db.send(new ScanCommand({ TableName: core.tableName, ConsistentRead: true }));
  return (scan.Items ?? []).filter((item) => String(item.pk).includes(`#${org}#`));
}

/** Every execution, of any status, of the connection's health-check loop. */
async function loopExecutions(connectionId: string) {
  const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: core.config.STATE_MACHINE_ARN, maxResults: 1000 }));
  return (listed.executions ?? []).filter((execution) => execution.name === connectionId || execution.name?.startsWith(`${connectionId}-g`));
}

const firstExecutionArn = (connectionId: string) => workflowEngine(core.config).executionArn(executionName(connectionId, 0));

describe("creating a connection", () => {
  it("keeps a connection whose workflow did not start, marked, and the retried create starts exactly one execution", async () => {
    const org = uniqueOrg();
    const outage = engineWithOutage();
    const connections = lifecycle({ workflow: outage.port });

    const created = await connections.create(org, { domain: "unstarted.example.com", profile_name: "p" });
    const marked = await core.connectionStore.get(org, created.id);
    const neverStarted = await sfn.send(new DescribeExecutionCommand({ executionArn: firstExecutionArn(created.id) })).catch((error: unknown) => error);
    outage.down = false;
    const retried = connections.create(org, { domain: "unstarted.example.com", profile_name: "p" });
    await expect(retried).rejects.toBeInstanceOf(ConflictError);
    const repaired = await core.connectionStore.get(org, created.id);
    const startsAfterRepair = outage.starts;
    await expect(connections.create(org, { domain: "unstarted.example.com", profile_name: "p" })).rejects.toBeInstanceOf(ConflictError);

    expect(marked?.workflow_start_pending).toBe(true);
    expect(neverStarted).toBeInstanceOf(ExecutionDoesNotExist);
    await expect(retried).rejects.toMatchObject({ extra: { existing_id: created.id } });
    expect(repaired?.workflow_start_pending).toBeUndefined();
    expect((await loopExecutions(created.id)).map((execution) => [execution.name, execution.status])).toEqual([[created.id, "RUNNING"]]);
    expect(outage.starts).toBe(startsAfterRepair);
    await core.connections.remove(org, created.id);
  });

  it("starts the missing execution when a login touches the connection", async () => {
    const org = uniqueOrg();
    const outage = engineWithOutage();
    // The login flow's own execution fails fast: nothing listens on port 9 of this machine.
    const created = await lifecycle({ workflow: outage.port }).create(org, {
      domain: "127.0.0.1",
      profile_name: "p",
      login_url: "http://127.0.0.1:9/login",
    });

    await loginRoutes(core.config).login(org, created.id, "http://127.0.0.1");
    const touched = await core.connectionStore.get(org, created.id);

    expect(touched?.workflow_start_pending).toBeUndefined();
    expect((await loopExecutions(created.id)).map((execution) => [execution.name, execution.status])).toEqual([[created.id, "RUNNING"]]);
    await core.connections.remove(org, created.id);
  });

  it("gives a connection left without its workflow one on the local runtime's restart, and clears the mark", async () => {
    const org = uniqueOrg();
    const created = await lifecycle({ workflow: engineWithOutage().port }).create(org, { domain: "restart.example.com", profile_name: "p" });

    await core.workflow.resume((await core.connectionStore.get(org, created.id))!);
    const resumed = await core.connectionStore.get(org, created.id);

    expect(resumed?.workflow_start_pending).toBeUndefined();
    expect(resumed?.execution_arn?.endsWith(`:${created.id}-g1`)).toBe(true);
    expect((await loopExecutions(created.id)).map((execution) => [execution.name, execution.status])).toEqual([[`${created.id}-g1`, "RUNNING"]]);
    await core.connections.remove(org, created.id);
  });

  it("leaves neither profile nor connection when the create's write fails", async () => {
    const org = uniqueOrg();
    const writesConnection = (command: unknown) =>
      command instanceof TransactWriteCommand && (command.input.TransactItems ?? []).some((item) => item.Put?.Item?.entity === "connection");
    const db = tableWithFault((command) => (writesConnection(command) ? Promise.reject(new Error("injected: the table is unreachable")) : undefined));

    const failed = lifecycle({ db }).create(org, { domain: "half.example.com", profile_name: "new-profile" });

    await expect(failed).rejects.toThrow("injected");
    expect(await itemsOfOrg(org)).toEqual([]);
  });

  it("ends two creates of a new profile for different domains on one profile", async () => {
    const org = uniqueOrg();

    const [first, second] = await Promise.all([
      core.connections.create(org, { domain: "one.example.com", profile_name: "shared" }),
      core.connections.create(org, { domain: "two.example.com", profile_name: "shared" }),
    ]);

    const items = await itemsOfOrg(org);
    const profiles = items.filter((item) => item.entity === "profile");
    expect(profiles).toHaveLength(1);
    expect(profiles[0]?.connection_count).toBe(2);
    expect(items.filter((item) => item.entity === "profile_name")).toHaveLength(1);
    expect(items.filter((item) => item.entity === "connection").map((item) => item.profile_id)).toEqual([profiles[0]?.id, profiles[0]?.id]);
    expect([first.profile_name, second.profile_name]).toEqual(["shared", "shared"]);
  });

  it("answers a guard that keeps vanishing with one bounded outcome, never a retry loop", async () => {
    const org = uniqueOrg();
    const existing = await core.connections.create(org, { domain: "vanishing.example.com", profile_name: "p" });
    let transactions = 0;
    // Every read of the guard misses, as if a delete had just removed it; the write still finds it.
    const db = tableWithFault((command) => {
      if (command instanceof TransactWriteCommand && ++transactions > 10) return Promise.reject(new Error("the insert kept retrying"));
      if (command instanceof GetCommand && String(command.input.Key?.pk).startsWith("CONNKEY#")) return Promise.resolve({});
      return undefined;
    });
    const store = dynamoConnectionStore(db, core.tableName);
    const record = (await core.connectionStore.get(org, existing.id))!;
    const rival = newConnection({
      org,
      profile: { id: record.profile_id, name: "p" },
      domain: "vanishing.example.com",
      settings: defaultSettings,
      createdAt: new Date().toISOString(),
      executionArnOf: workflowEngine(core.config).executionArn,
    });

    const outcome = await store.insert(rival);
    const insertTransactions = transactions;
    transactions = 0;
    const created = lifecycle({ db }).create(org, { domain: "vanishing.example.com", profile_name: "p" });

    expect(outcome).toEqual({ outcome: "raced" });
    expect(insertTransactions).toBe(1);
    await expect(created).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(transactions).toBe(3);
    await core.connections.remove(org, existing.id);
  });
});

describe("the workflow port's start", () => {
  it("is idempotent by name: a second start of a started name, with any input, answers that execution", async () => {
    const engine = workflowEngine(core.config);
    const name = `idempotent-${uniqueOrg()}`;
    // An hour ahead: the execution waits in its first state and runs no task.
    const nextCheckAt = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const waiting = { org: "o", connection_id: "ac_x", generation: 0, iteration: 0, next_check_at: nextCheckAt };

    const first = await engine.start(name, waiting);
    const same = await engine.start(name, waiting);
    const otherInput = await engine.start(name, { ...waiting, iteration: 1 });
    await engine.stop(first);
    const afterItEnded = await engine.start(name, waiting);

    expect([same, otherInput, afterItEnded]).toEqual([first, first, first]);
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn: first }))).status).toBe("ABORTED");
  });
});
