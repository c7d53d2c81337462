import { describe, expect, it } from "vitest";
import type { Connection, ConnectionStore, RecordGuard, TimelineRecord } from "#shared/domain/connection.ts";
import { Deadline } from "#shared/deadline.ts";
import { loginStepCore, type LoginStepDeps } from "#shared/domain/flows/step.ts";
import type { FlowPrompt, LoginEngine, StepOutcome } from "#shared/login/types.ts";
import type { SecretBox } from "#shared/secrets/secret-box.ts";
import { connectionRecord } from "../support/connection-record.ts";
import { eventually } from "../support/poll.ts";

const minute = 60_000;
const started = new Date("2026-11-23T10:00:00.000Z");

const prompt: FlowPrompt = {
  discovered_fields: [],
  fields: [{ id: "password", ref: "password", type: "password" }],
  choices: [],
  mfa_options: [],
  sign_in_options: [],
  pending_sso_buttons: [],
  external_action_message: null,
};

/** The record in memory, with the flow guard the DynamoDB store enforces by condition. */
function memoryStore(connection: Connection) {
  const timeline: TimelineRecord[] = [];
  const holds = (guard: RecordGuard) =>
    "flowId" in guard && connection.flow_id === guard.flowId && connection.flow_status === "IN_PROGRESS" && (!guard.step || connection.flow_step === guard.step);
  const store = {
    get: async () => ({ ...connection }),
    guardedUpdate: async (_org: string, _id: string, guard: RecordGuard, changes: Partial<Connection>) => {
      if (!holds(guard)) return undefined;
      Object.assign(connection, changes);
      return { ...connection };
    },
    recordOutcome: async (_org: string, _id: string, guard: RecordGuard, changes: Partial<Connection>, event: TimelineRecord) => {
      if (!holds(guard)) return false;
      Object.assign(connection, changes);
      timeline.push(event);
      return true;
    },
  } as unknown as ConnectionStore;
  return { store, connection, timeline };
}

/** Seals by wrapping: these tests are about time, not encryption. */
const plainBox: SecretBox = { seal: async (text) => `sealed:${text}`, open: async (sealed) => sealed.slice("sealed:".length) };

function setup(flow: Partial<Connection>, now: Date | (() => Date), engine: Partial<LoginEngine> = {}) {
  const record = memoryStore(
    connectionRecord({
      org: "o",
      created_at: started.toISOString(),
      flow_id: "f1",
      flow_status: "IN_PROGRESS",
      flow_step: "DISCOVERING",
      flow_type: "LOGIN",
      flow_started_at: started.toISOString(),
      ...flow,
    }),
  );
  const engineCalls: string[] = [];
  const asksAgain = async (): Promise<StepOutcome> => ({ kind: "input", state: { step: engineCalls.length }, prompt, websiteError: null });
  const core = loginStepCore({
    connections: record.store,
    engine: {
      start: async () => (engineCalls.push("start"), asksAgain()),
      submit: async () => (engineCalls.push("submit"), asksAgain()),
      release: async () => void engineCalls.push("release"),
      ...engine,
    },
    secrets: plainBox,
    timing: { timeScale: 1 },
    timelineRetentionDays: 90,
    submissionPollMs: 1,
    now: typeof now === "function" ? now : () => now,
  } as unknown as LoginStepDeps);
  return { ...record, core, engineCalls };
}

const input = { org: "o", connection_id: "ac_1", flow_id: "f1" };

describe("a login flow's clock", () => {
  it("waits up to 10 minutes for input after a step", async () => {
    const { core, connection } = setup({}, started);

    const output = await core.loginStep(input);

    expect(output).toEqual({ ...input, next: "await_input", input_timeout_seconds: 600 });
    expect(connection).toMatchObject({ flow_step: "AWAITING_INPUT", flow_expires_at: new Date(started.getTime() + 10 * minute).toISOString() });
  });

  it("waits only for what is left of the 20 minutes in all", async () => {
    const submitted = { flow_step: "SUBMITTING" as const, flow_engine_state: "sealed:{}", flow_submission: 'sealed:{"fields":{"password":"x"}}' };
    const { core, connection, engineCalls } = setup(submitted, new Date(started.getTime() + 15 * minute));

    const output = await core.loginStep(input);

    expect(engineCalls).toEqual(["submit"]);
    expect(output).toEqual({ ...input, next: "await_input", input_timeout_seconds: 300 });
    expect(connection.flow_expires_at).toBe(new Date(started.getTime() + 20 * minute).toISOString());
  });

  it("ends EXPIRED once 20 minutes have passed, without running the engine", async () => {
    const submitted = { flow_step: "SUBMITTING" as const, flow_engine_state: "sealed:{}", flow_submission: 'sealed:{"fields":{"password":"x"}}' };
    const { core, connection, engineCalls, timeline } = setup(submitted, new Date(started.getTime() + 20 * minute));

    const output = await core.loginStep(input);

    expect(output).toEqual({ ...input, next: "end" });
    expect(engineCalls).toEqual([]);
    expect(connection).toMatchObject({ flow_status: "EXPIRED", error_code: "flow_expired", flow_engine_state: null, flow_submission: null });
    expect(timeline.map((record) => [record.event.type, record.event.status])).toEqual([["login", "EXPIRED"]]);
  });

  it("hands the engine the flow's deadline, and a step it cut short ends EXPIRED, not with the wait's failure", async () => {
    // Real time: the engine's deadline is on the real clock, 20 minutes after the flow began.
    const began = new Date(Date.now() - 20 * minute + 50);
    const cutShort = async (_target: unknown, deadline?: Deadline): Promise<StepOutcome> => {
      await new Promise((resolve) => deadline!.signal.addEventListener("abort", resolve));
      return { kind: "failure", errorCode: "site_unreachable", message: "the site did not answer before the step's deadline" };
    };
    const { core, connection } = setup({ flow_started_at: began.toISOString() }, () => new Date(), { start: cutShort });

    await core.loginStep(input);

    expect(connection).toMatchObject({ flow_status: "EXPIRED", error_code: "flow_expired" });
  });

  it("keeps a step's own failure when the deadline is still ahead", async () => {
    const fails = async (): Promise<StepOutcome> => ({ kind: "failure", errorCode: "site_unreachable", message: "the site did not answer" });
    const { core, connection } = setup({ flow_started_at: new Date().toISOString() }, () => new Date(), { start: fails });

    await core.loginStep(input);

    expect(connection).toMatchObject({ flow_status: "FAILED", error_code: "site_unreachable" });
  });
});

describe("a browser flow's step", () => {
  const heldPage = async (): Promise<StepOutcome> => ({ kind: "input", state: { page: "held" }, prompt, websiteError: null, browserSessionId: "bs_held" });
  const awaitingInput = (connection: Connection) => eventually(async () => (connection.flow_step === "AWAITING_INPUT" ? true : undefined), "the step to wait for input");

  it("holds the page: the same invocation answers the submission, and the record shows the browser meanwhile", async () => {
    const submitted: unknown[] = [];
    const { core, connection, engineCalls, timeline } = setup({}, started, {
      start: async () => (engineCalls.push("start"), heldPage()),
      submit: async (_target, state, submission) => {
        engineCalls.push("submit");
        submitted.push([state, submission]);
        return { kind: "failure", errorCode: "credentials_invalid", message: "refused" };
      },
    });

    const step = core.loginStep(input);
    await awaitingInput(connection);
    expect(connection.browser_session_id).toBe("bs_held");
    Object.assign(connection, { flow_step: "SUBMITTING", flow_submission: 'sealed:{"fields":{"password":"x"}}' });

    expect(await step).toEqual({ ...input, next: "end" });
    expect(engineCalls).toEqual(["start", "submit"]);
    expect(submitted).toEqual([[{ page: "held" }, { fields: { password: "x" } }]]);
    expect(connection).toMatchObject({ flow_status: "FAILED", error_code: "credentials_invalid", browser_session_id: null });
    expect(timeline.map((record) => record.event.status)).toEqual(["FAILED"]);
  });

  it("expires 14 minutes after the flow began, and closes the browser", async () => {
    let now = new Date(started.getTime() + 13 * minute);
    const { core, connection, engineCalls } = setup({}, () => now, { start: async () => (engineCalls.push("start"), heldPage()) });

    const step = core.loginStep(input);
    await awaitingInput(connection);
    expect(connection.flow_expires_at).toBe(new Date(started.getTime() + 14 * minute).toISOString());
    now = new Date(started.getTime() + 14 * minute);

    expect(await step).toEqual({ ...input, next: "end" });
    expect(engineCalls).toEqual(["start", "release"]);
    expect(connection).toMatchObject({ flow_status: "EXPIRED", error_code: "flow_expired", browser_session_id: null });
  });

  it("closes the browser once the flow is canceled elsewhere", async () => {
    const { core, connection, engineCalls } = setup({}, started, { start: async () => (engineCalls.push("start"), heldPage()) });

    const step = core.loginStep(input);
    await awaitingInput(connection);
    Object.assign(connection, { flow_status: "CANCELED", flow_step: "COMPLETED" });

    expect(await step).toEqual({ ...input, next: "end" });
    expect(engineCalls).toEqual(["start", "release"]);
  });

  it("closes the browser when the submission cannot be opened, since the engine never takes the page back", async () => {
    const { core, connection, engineCalls } = setup({}, started, { start: async () => (engineCalls.push("start"), heldPage()) });

    const step = core.loginStep(input);
    await awaitingInput(connection);
    Object.assign(connection, { flow_step: "SUBMITTING", flow_submission: "sealed:{not a submission" });

    expect(await step).toEqual({ ...input, next: "end" });
    expect(engineCalls).toEqual(["start", "release"]);
    expect(connection).toMatchObject({ flow_status: "FAILED", error_code: "internal_error" });
  });

  it("closes the browser when the step fails on its way (the table is down), not only when the flow ends", async () => {
    const { core, store, engineCalls } = setup({}, started, { start: async () => (engineCalls.push("start"), heldPage()) });
    store.guardedUpdate = async () => {
      throw new Error("the table is unavailable");
    };

    await expect(core.loginStep(input)).rejects.toThrow("the table is unavailable");
    expect(engineCalls).toEqual(["start", "release"]);
  });
});
