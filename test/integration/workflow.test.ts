import { DescribeExecutionCommand, ListExecutionsCommand, type SFNClient } from "@aws-sdk/client-sfn";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { officialSfnClient } from "../support/official-sfn.ts";
import { keys } from "#shared/store/keys.ts";
import { eventually } from "../support/poll.ts";
import { servicesOnFreshTable, uniqueOrg } from "../support/services.ts";
import { intervalWitness as sharedIntervalWitness } from "../support/interval-witness.ts";
import { officialClient } from "../support/stack.ts";

/** 300 s (the shortest interval) runs in 0.3 s. */
const timeScale = 0.001;

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let sfn: SFNClient;
let client: Kernel;

beforeAll(async () => {
  core = await servicesOnFreshTable({ timeScale });
  sfn = officialSfnClient(core.stack.sfnEndpoint);
  client = officialClient(core.stack);
});

afterAll(async () => {
  await core?.stack.stop();
});

const healthChecks = (org: string, id: string) => core.connections.timeline(org, id, { type: "health_check", limit: 100, offset: 0 });

async function executionStatus(arn: string) {
  return (await sfn.send(new DescribeExecutionCommand({ executionArn: arn }))).status;
}

async function runningExecutions() {
  return (await sfn.send(new ListExecutionsCommand({ stateMachineArn: core.config.STATE_MACHINE_ARN, statusFilter: "RUNNING", maxResults: 1000 }))).executions ?? [];
}

async function intervalWitness() {
  const witness = await sharedIntervalWitness(client);
  return { ...witness, executionArn: (await core.connectionStore.get("local", witness.id))!.execution_arn! };
}

async function partitionItems(org: string, id: string) {
  const result = await core.db.send(new QueryCommand({ TableName: core.tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": keys.connection(org, id).pk } }));
  return result.Items ?? [];
}

describe("the connection workflow", () => {
  it("health-checks on every interval, and after delete the execution is aborted and nothing more is written", async () => {
    const org = uniqueOrg();
    const created = await core.connections.create(org, { domain: "checked.example.com", profile_name: "p", health_check_interval: 300 });
    const arn = (await core.connectionStore.get(org, created.id))!.execution_arn!;
    const witness = await intervalWitness();

    const events = await eventually(async () => {
      const page = await healthChecks(org, created.id);
      return page.items.length >= 3 ? page.items : undefined;
    }, "three health checks");
    const checked = await core.connections.get(org, created.id);
    const runningBefore = await executionStatus(arn);
    await core.connections.remove(org, created.id);
    const statusAfter = await executionStatus(arn);
    await witness.intervalsPass(5);
    const itemsLater = await partitionItems(org, created.id);
    await witness.remove();

    expect(runningBefore).toBe("RUNNING");
    expect(events[0]).toMatchObject({ type: "health_check", status: "NEEDS_AUTH", previous_status: "NEEDS_AUTH", error_code: "no_session" });
    expect(events.map((event) => event.timestamp)).toEqual([...events.map((event) => event.timestamp)].sort().reverse());
    expect(checked.last_auth_check_at).not.toBeNull();
    expect(checked.status).toBe("NEEDS_AUTH");
    expect(statusAfter).toBe("ABORTED");
    expect(itemsLater).toEqual([]);
  });

  it("leaves no execution running after 30 connections are deleted while their checks run", async () => {
    const org = uniqueOrg();
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        core.connections.create(org, { domain: `race${index}.example.com`, profile_name: "racer", health_check_interval: 300 }),
      ),
    );
    const witness = await intervalWitness();
    await eventually(async () => ((await healthChecks(org, created[29]!.id)).items.length >= 2 ? true : undefined), "checks to run");

    await Promise.all(created.map((connection) => core.connections.remove(org, connection.id)));
    const runningAfterDeletes = await runningExecutions();
    await witness.intervalsPass(3);
    const runningLater = await runningExecutions();
    await witness.remove();

    expect(runningAfterDeletes.map((execution) => execution.executionArn)).toEqual([witness.executionArn]);
    expect(runningLater.map((execution) => execution.executionArn)).toEqual([witness.executionArn]);
  });

  it("applies health-check settings at the next wait without a restart", async () => {
    const org = uniqueOrg();
    const created = await core.connections.create(org, { domain: "settings.example.com", profile_name: "p", health_check_interval: 300 });
    const witness = await intervalWitness();
    const checks = async () => (await healthChecks(org, created.id)).items.length;
    await eventually(async () => ((await checks()) >= 1 ? true : undefined), "a first check");

    await core.connections.update(org, created.id, { health_checks: false });
    // A check already under way when the setting changed may still land.
    await witness.intervalsPass(2);
    const afterOff = await checks();
    await witness.intervalsPass(5);
    const stillOff = await checks();
    await core.connections.update(org, created.id, { health_checks: true, health_check_interval: 86400 });
    // The wait already running was scheduled at 300 s: its check comes, then the next is a day away.
    const resumed = await eventually(async () => {
      const count = await checks();
      return count > stillOff ? count : undefined;
    }, "the check the running wait was due for");
    await witness.intervalsPass(5);
    const afterLongInterval = await checks();
    await core.connections.remove(org, created.id);
    await witness.remove();

    expect(stillOff).toBe(afterOff);
    expect(resumed).toBe(stillOff + 1);
    expect(afterLongInterval).toBe(resumed);
  });

  it("serves the timeline through the official client, newest first, filtered by type", async () => {
    const connection = await client.auth.connections.create({ domain: "timeline.example.com", profile_name: "p", health_check_interval: 300 });
    await eventually(async () => ((await healthChecks("local", connection.id)).items.length >= 4 ? true : undefined), "four checks");
    await client.auth.connections.update(connection.id, { health_checks: false });

    const seen = [];
    for await (const event of client.auth.connections.timeline(connection.id, { type: "health_check", limit: 2 })) seen.push(event);
    const logins = await client.auth.connections.timeline(connection.id, { type: "login" });
    const badType = await fetch(`${core.stack.url}/auth/connections/${connection.id}/timeline?type=nap`, {
      headers: { authorization: `Bearer ${core.stack.apiKey}` },
    });
    const unknown = await fetch(`${core.stack.url}/auth/connections/ac_unknown/timeline`, { headers: { authorization: `Bearer ${core.stack.apiKey}` } });
    await client.auth.connections.delete(connection.id);

    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(new Set(seen.map((event) => event.id)).size).toBe(seen.length);
    expect(seen.every((event) => event.type === "health_check")).toBe(true);
    expect(logins.getPaginatedItems()).toEqual([]);
    expect(badType.status).toBe(400);
    expect(unknown.status).toBe(404);
  });
});
