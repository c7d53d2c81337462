import { describe, expect, it } from "vitest";
import { substitutedDefinition, workflowTasks } from "#shared/step-functions/definition.ts";
import { scaledRetryIntervals } from "../../infra/local/step-functions.ts";

const deployed = () => substitutedDefinition(Object.fromEntries(Object.values(workflowTasks).map((task) => [task.placeholder, `arn:${task.functionName}`])));

describe("the local runner's retry waits", () => {
  it("leaves the ASL's own intervals, backoff and jitter in force at scale 1", () => {
    expect(scaledRetryIntervals(deployed(), 1)).toEqual({});
  });

  it("scales each retrier's interval as the ASL states it, per state", () => {
    const definition = {
      States: {
        Quick: { Type: "Task", Retry: [{ ErrorEquals: ["A"], IntervalSeconds: 2 }, { ErrorEquals: ["B"], IntervalSeconds: 5 }] },
        Defaulted: { Type: "Task", Retry: [{ ErrorEquals: ["A"] }] },
        NoRetry: { Type: "Pass" },
      },
    };

    expect(scaledRetryIntervals(definition, 0.01)).toEqual({ Quick: [20, 50], Defaulted: [10] });
  });

  it("covers every task state of the deployed definition that retries", () => {
    const states = deployed().States as Record<string, { Retry?: { IntervalSeconds: number }[] }>;

    const intervals = scaledRetryIntervals(deployed(), 0.5);

    for (const [name, state] of Object.entries(states).filter(([, state]) => state.Retry)) {
      expect(intervals[name], name).toEqual(state.Retry?.map((retrier) => retrier.IntervalSeconds * 500));
    }
    expect(Object.keys(intervals).length).toBeGreaterThan(0);
  });
});
