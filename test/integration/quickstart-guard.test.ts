import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const repoRoot = resolve(import.meta.dirname, "../..");
const dataDir = mkdtempSync(join(tmpdir(), "acs-quickstart-"));
/** What a shell set up for Kernel's hosted API holds: the official client reads these when given nothing. */
const kernelAccount = { KERNEL_BASE_URL: "https://kernel.invalid", KERNEL_API_KEY: "sk_real_account_key" };

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `npm run quickstart` with only `env` set; neither case reaches the network. */
function quickstart(env: Record<string, string>) {
  return spawnSync(join(repoRoot, "node_modules/.bin/node"), ["examples/quickstart.ts"], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, ...kernelAccount, ...env },
    encoding: "utf8",
  });
}

describe("examples/quickstart.ts", () => {
  it("uses the local service's address and key file, not KERNEL_BASE_URL and KERNEL_API_KEY, and stops when the key file is missing", () => {
    const run = quickstart({ DATA_DIR: dataDir });

    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`no API key in ${join(dataDir, "api-key")}`);
    expect(run.stderr).toContain("http://127.0.0.1:8080");
    expect(run.stderr).not.toContain(kernelAccount.KERNEL_API_KEY);
  });

  it("refuses to send the local key to an API on another machine", () => {
    writeFileSync(join(dataDir, "api-key"), "local-key-that-stays-here\n");

    const run = quickstart({ DATA_DIR: dataDir, API: "https://api.onkernel.com" });

    expect(run.status).toBe(1);
    expect(run.stderr).toContain("https://api.onkernel.com is not on this machine: set KEY");
  });
});
