import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { browserIsolationProblem } from "#shared/browsers/local-chromium.ts";

const base = mkdtempSync(join(tmpdir(), "acs-isolation-"));
chmodSync(base, 0o711);

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A DATA_DIR under a directory of `mode`. */
function dataDirUnder(name: string, mode: number): string {
  const above = join(base, name);
  mkdirSync(join(above, "data"), { recursive: true });
  chmodSync(above, mode);
  return join(above, "data");
}

describe("whether pooled browsers can run each as a user of its own", () => {
  it.runIf(process.getuid?.() === 0)("they can, as root, where every directory above the browsers and Chromium lets others pass through", async () => {
    const dataDir = dataDirUnder("open", 0o711);

    expect(await browserIsolationProblem([join(dataDir, "browsers"), join(dataDir, "chromium")])).toBeUndefined();
  });

  it.runIf(process.getuid?.() === 0)("they cannot, as root, where a directory above them is closed to others, which the problem names", async () => {
    const dataDir = dataDirUnder("closed", 0o700);

    expect(await browserIsolationProblem([join(dataDir, "browsers")])).toMatch(`cannot pass through ${join(base, "closed")} (mode 700)`);
  });

  it.runIf(process.getuid?.() !== 0)("they cannot but as root", async () => {
    expect(await browserIsolationProblem([join(base, "browsers")])).toMatch(`run as this service's user (uid ${process.getuid?.()})`);
  });
});
