import { afterEach, expect, it, vi } from "vitest";
import { countMetric, metricNamespace } from "#shared/log.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

it("writes a count as one CloudWatch embedded-metric line with its fields", () => {
  const lines: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });

  countMetric("ReAuths", { outcome: "SUCCESS" });

  expect(lines).toHaveLength(1);
  expect(lines[0]?.endsWith("\n")).toBe(true);
  const line = JSON.parse(lines[0] ?? "");
  expect(line).toMatchObject({ ReAuths: 1, outcome: "SUCCESS" });
  expect(line._aws.CloudWatchMetrics).toEqual([{ Namespace: metricNamespace, Dimensions: [[]], Metrics: [{ Name: "ReAuths", Unit: "Count" }] }]);
  expect(typeof line._aws.Timestamp).toBe("number");
});
