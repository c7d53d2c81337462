import { DescribeExecutionCommand, ListExecutionsCommand, type SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { officialSfnClient } from "../support/official-sfn.ts";
import { eventually } from "../support/poll.ts";
import { servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let sfn: SFNClient;

beforeAll(async () => {
  // Two iterations per execution instead of 2000, so the hand-over happens within a second.
  core = await servicesOnFreshTable({ timeScale: 0.001, maxIterations: 2 });
  sfn = officialSfnClient(core.stack.sfnEndpoint);
});

afterAll(async () => {
  await core?.stack.stop();
});

const statusOf = async (executionArn: string) => (await sfn.send(new DescribeExecutionCommand({ executionArn }))).status;

describe("continue as new", () => {
  it("hands the loop to a new execution that the record follows, and a later delete stops that one", async () => {
    const org = uniqueOrg();
    const created = await core.connections.create(org, { domain: "long-lived.example.com", profile_name: "p", health_check_interval: 300 });
    const store = (id: string) => core.connectionStore.get(org, id);
    const first = (await store(created.id))!.execution_arn!;

    const handedOver = await eventually(async () => {
      const record = await store(created.id);
      return record && record.workflow_generation >= 2 ? record : undefined;
    }, "two hand-overs");
    const firstStatus = await statusOf(first);
    const current = handedOver.execution_arn!;
    await core.connections.remove(org, created.id);
    const currentStatus = await statusOf(current);
    const running = (await sfn.send(new ListExecutionsCommand({ stateMachineArn: core.config.STATE_MACHINE_ARN, statusFilter: "RUNNING" }))).executions;

    expect(current).not.toBe(first);
    expect(current.endsWith(`${created.id}-g${handedOver.workflow_generation}`)).toBe(true);
    expect(firstStatus).toBe("SUCCEEDED");
    expect(currentStatus).toBe("ABORTED");
    expect(running).toEqual([]);
  });
});
