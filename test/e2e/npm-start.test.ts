import { execFileSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startService } from "../support/npm-start.ts";

const apiKeyScript = resolve(import.meta.dirname, "../../scripts/api-key.ts");
const dataDir = mkdtempSync(join(tmpdir(), "acs-start-"));
const children: ChildProcessWithoutNullStreams[] = [];

const start = () => startService(dataDir, children);

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start", () => {
  it("serves the API, refuses a second start, stops on Ctrl-C and keeps data and key across restarts", async () => {
    const first = start();
    const { url, apiKey } = await first.ready;
    const auth = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
    const created = await fetch(`${url}/auth/connections`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ domain: "kept.example.com", profile_name: "survivor" }),
    });
    const { id } = (await created.json()) as { id: string };

    const second = start();
    const secondExit = await second.exited;
    first.child.kill("SIGINT");
    const firstExit = await first.exited;
    const lockRemoved = !existsSync(join(dataDir, "running.json"));
    const again = start();
    const restarted = await again.ready;
    const fetched = await fetch(`${restarted.url}/auth/connections/${id}`, { headers: auth });
    again.child.kill("SIGINT");
    await again.exited;

    expect(created.status).toBe(201);
    expect(secondExit).toBe(1);
    expect(second.output()).toContain("already running");
    expect(firstExit).toBe(0);
    expect(lockRemoved).toBe(true);
    expect(restarted.apiKey).toBe(apiKey);
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toMatchObject({ id, domain: "kept.example.com" });
  });

  // Only a service run as root serves a second org (docs/security.md); pools-isolation.test.ts shows the refusal.
  it.runIf(process.getuid?.() === 0)("mints a key for another org into the running service, which shows that org none of the first one's", async () => {
    const service = start();
    const { url, apiKey } = await service.ready;
    const created = await fetch(`${url}/auth/connections`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ domain: "first.example.com", profile_name: "first-org" }),
    });
    const { id } = (await created.json()) as { id: string };
    const minted = execFileSync(process.execPath, [apiKeyScript, "--org", "acme"], { env: { ...process.env, DATA_DIR: dataDir } });
    const acmeKey = /\n(ak_\S+)/.exec(minted.toString())?.[1];
    const acmeView = await fetch(`${url}/auth/connections/${id}`, { headers: { authorization: `Bearer ${acmeKey}` } });
    const acmeList = await fetch(`${url}/auth/connections`, { headers: { authorization: `Bearer ${acmeKey}` } });
    service.child.kill("SIGINT");
    await service.exited;

    expect(created.status).toBe(201);
    expect(acmeView.status).toBe(404);
    expect(acmeList.status).toBe(200);
    expect(await acmeList.json()).toEqual([]);
  });
});
