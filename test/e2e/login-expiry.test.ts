import type Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startLoginSite, type LoginSite } from "../sites/login-site.ts";
import { nextFlowState } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let site: LoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  site = await startLoginSite();
  // A flow's 10 minutes without input pass in 1.2 s (Step Functions rounds the wait up to 2 s).
  stack = await startTestStack({ timeScale: 0.002 });
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
  await site?.stop();
});

it("expires a flow that waits 10 (scaled) minutes for input, and refuses a late submit", async () => {
  const created = await client.auth.connections.create({ domain: "127.0.0.1", profile_name: "expiry", login_url: `${site.url}/plain/login`, health_checks: false });
  await client.auth.connections.login(created.id);
  const waiting = await nextFlowState(client, created.id);
  expect(waiting.flow_step).toBe("AWAITING_INPUT");

  const expired = await eventually(async () => {
    const connection = await client.auth.connections.retrieve(created.id);
    return connection.flow_status === "EXPIRED" ? connection : undefined;
  }, "the flow to expire", 15);

  expect(expired).toMatchObject({ error_code: "flow_expired", status: "NEEDS_AUTH", fields: null });
  await expect(client.auth.connections.submit(created.id, { fields: { password: site.user.password } })).rejects.toMatchObject({ status: 409 });
  const timeline = await client.auth.connections.timeline(created.id, { type: "login" });
  expect(timeline.getPaginatedItems()[0]).toMatchObject({ status: "EXPIRED", error_code: "flow_expired" });
});
