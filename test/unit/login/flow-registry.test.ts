import { describe, expect, it } from "vitest";
import { createFlowRegistry } from "#shared/login/browser/flow-registry.ts";
import { eventually } from "../../support/poll.ts";

function closable() {
  const flow = { closed: 0, close: async () => void flow.closed++ };
  return flow;
}

describe("live browser flow registry", () => {
  it("closes a flow once and forgets it", async () => {
    const registry = createFlowRegistry<ReturnType<typeof closable>>(60_000);
    const flow = closable();
    registry.add("bs_1", flow);
    expect(registry.get("bs_1")).toBe(flow);
    await registry.close("bs_1");
    await registry.close("bs_1");
    expect(flow.closed).toBe(1);
    expect(registry.get("bs_1")).toBeUndefined();
  });

  it("closes a flow left untouched past the idle limit", async () => {
    const registry = createFlowRegistry<ReturnType<typeof closable>>(50);
    const flow = closable();
    registry.add("bs_2", flow);
    await eventually(async () => (flow.closed === 1 ? true : undefined), "the idle flow to close", 5);
    expect(registry.size()).toBe(0);
  });
});
