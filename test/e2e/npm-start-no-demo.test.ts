import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startService } from "../support/npm-start.ts";

const dataDir = mkdtempSync(join(tmpdir(), "acs-no-demo-"));
const children: ChildProcessWithoutNullStreams[] = [];

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start -- --no-demo", () => {
  it("serves the API without the demo site", async () => {
    const started = startService(dataDir, children, ["--no-demo"]);
    const { url, apiKey } = await started.ready;
    const listed = await fetch(`${url}/auth/connections`, { headers: { authorization: `Bearer ${apiKey}` } });
    started.child.kill("SIGINT");
    const exitCode = await started.exited;

    expect(listed.status).toBe(200);
    expect(started.output()).not.toMatch(/demo (site|user)/i);
    expect(exitCode).toBe(0);
  });

  it("refuses an option it does not know, with the usage", async () => {
    const started = startService(dataDir, children, ["--no-dmeo"]);

    expect(await started.exited).toBe(2);
    expect(started.output()).toContain("--no-demo");
  });
});
