import { describe, expect, it } from "vitest";
import { Deadline } from "#shared/deadline.ts";

describe("Deadline", () => {
  it("counts what remains on the clock it was given, never below zero", () => {
    let now = 1_000;
    const deadline = Deadline.in(500, () => now);
    expect(deadline.at).toBe(1_500);
    expect(deadline.remainingMs()).toBe(500);
    expect(deadline.passed).toBe(false);
    now = 2_000;
    expect(deadline.remainingMs()).toBe(0);
    expect(deadline.passed).toBe(true);
  });

  it("narrows to a nearer budget and keeps itself when the budget is later", () => {
    const now = 0;
    const deadline = Deadline.at(1_000, () => now);
    expect(deadline.within(200).at).toBe(200);
    expect(deadline.within(5_000)).toBe(deadline);
  });


  it("aborts its signal when it passes, and sleeps no longer than what remains", async () => {
    const deadline = Deadline.in(10);
    await new Promise<void>((resolve) => deadline.signal.addEventListener("abort", () => resolve()));
    expect(deadline.signal.aborted).toBe(true);
    await deadline.sleep(60_000);
  });

  it("races a promise: its value when it comes first, the fallback once the deadline has passed", async () => {
    expect(await Deadline.in(60_000).race(Promise.resolve("answer"), "late")).toBe("answer");
    expect(await Deadline.in(10).race(new Promise<string>(() => undefined), "late")).toBe("late");
    expect(await Deadline.in(0).race(new Promise<string>(() => undefined), null)).toBeNull();
  });
});
