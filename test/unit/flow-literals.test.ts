import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { flowStatuses, flowSteps } from "#shared/domain/flows/state.ts";

const root = resolve(import.meta.dirname, "../..");
const home = "shared/domain/flows/state.ts";
const folders = ["shared", "functions", "infra"];

const flowValues: readonly string[] = [...flowStatuses, ...flowSteps];
/** A timeline event's, a metric's and an execution's statuses use these words too: they count only in a flow position. */
const sharedWords = new Set(["SUCCESS", "FAILED"]);
const flowOnly = flowValues.filter((value) => !sharedWords.has(value));

const quoted = (values: readonly string[]) => `["'\`](?:${values.join("|")})["'\`]`;
const flowKey = String.raw`\b(?:flow_status|flow_step|step)\b`;
const comparison = String.raw`[!=]==?`;
const patterns: Array<{ what: string; pattern: RegExp; where?: (path: string) => boolean }> = [
  // `flow_status: "X"`, `flow_step = "X"`, `.flow_status === "X"`, `step: "X"` in a guard, with `(` or `as` between.
  { what: "a flow value written to or compared with a flow_status, flow_step or step", pattern: new RegExp(`${flowKey}\\??\\s*(?::|=|${comparison})\\s*\\(?\\s*${quoted(flowValues)}`, "g") },
  // `"X" === connection.flow_status`
  { what: "a flow value compared with a flow_status or flow_step", pattern: new RegExp(`${quoted(flowValues)}\\s*${comparison}\\s*[\\w$.?!\\]\\[]*${flowKey}`, "g") },
  // A value only a flow has, anywhere: in a set, a map, a type, a constant, a `case`.
  { what: "a value only a flow's status or step has", pattern: new RegExp(quoted(flowOnly), "g") },
  // The domain's `status` keys hold a connection's status (AUTHENTICATED, NEEDS_AUTH): a flow value there is a flow's end by hand, `{ status: "FAILED", code }`.
  {
    what: "a flow value under a status key in the domain",
    pattern: new RegExp(`\\bstatus\\s*(?::|=|${comparison})\\s*${quoted(flowValues)}`, "g"),
    where: (path) => path.startsWith("shared/domain/"),
  },
];

/** Every .ts file under the service's folders, by path from the repository's root. */
function sources(): string[] {
  return folders.flatMap((folder) =>
    (readdirSync(join(root, folder), { recursive: true, encoding: "utf8" }) as string[])
      .filter((path) => path.endsWith(".ts") && !path.split("/").includes("node_modules"))
      .map((path) => `${folder}/${path}`),
  );
}

/** The text with its comments blanked (line breaks kept), so prose may name a status; string literals stay. */
function withoutComments(text: string): string {
  return text.replace(/("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (match, literal: string | undefined) =>
    literal ?? match.replace(/[^\n]/g, " "),
  );
}

/** `path:line: what: the code`, for each flow literal in the file. */
function flowLiterals(path: string, text: string): string[] {
  const code = withoutComments(text);
  const found = new Map<number, string>();
  for (const { what, pattern, where } of patterns) {
    if (where && !where(path)) continue;
    for (const match of code.matchAll(pattern)) {
      const line = code.slice(0, match.index).split("\n").length;
      if (!found.has(line)) found.set(line, `${path}:${line}: ${what}: ${text.split("\n")[line - 1]!.trim()}`);
    }
  }
  return [...found.values()];
}

describe("the flow's status and step values", () => {
  it("are written and compared only in shared/domain/flows/state.ts: elsewhere through its transitions, guards and predicates", () => {
    const elsewhere = sources()
      .filter((path) => path !== home)
      .flatMap((path) => flowLiterals(path, readFileSync(join(root, path), "utf8")));

    expect(elsewhere).toEqual([]);
  });

  it("are found where they live, so the patterns above do find them", () => {
    const found = flowLiterals(home, readFileSync(join(root, home), "utf8")).join("\n");

    for (const value of flowValues) expect(found).toContain(`"${value}"`);
    expect(found).toMatch(/flow_status: "CANCELED"/);
    expect(found).toMatch(/step: "AWAITING_INPUT"/);
    expect(found).toMatch(/flow_status === "FAILED"/);
  });

  it("are found in each form a file could write one", () => {
    const forms = [
      `update({ flow_status: "SUCCESS", flow_step: "COMPLETED" })`,
      `guard = { flowId, step: "AWAITING_INPUT" }`,
      `if (connection.flow_status === "FAILED") return`,
      `if ("FAILED" !== connection?.flow_status) return`,
      `connection.flow_step = "SUBMITTING" as const`,
      `const ended = new Set(["SUCCESS", "EXPIRED"])`,
      "const label = `IN_PROGRESS`",
      `switch (status) { case 'CANCELED': break }`,
      `outcomes.fail(connection, guard, { status: "FAILED", code: "rate_limited", message })`,
    ];

    expect(forms.filter((form) => flowLiterals("shared/domain/example.ts", form).length === 0)).toEqual([]);
    // Prose and other vocabularies' words are not flow values.
    expect(flowLiterals("infra/example.ts", `// flow_status: "FAILED"\ncountMetric("ReAuths", { outcome: "FAILED" }); execution.status = "FAILED";`)).toEqual([]);
  });
});
