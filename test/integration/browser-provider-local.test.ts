import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localChromium } from "#shared/browsers/local-chromium.ts";
import { providerContract } from "./browser-provider-contract.ts";

providerContract("local Chromium", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "acs-provider-contract-"));
  // Open to pass through, as the service leaves its data: run as root, each browser runs as a user of its own.
  await chmod(dataDir, 0o711);
  const root = join(dataDir, "browsers");
  return {
    browsers: localChromium({ root, unpackDir: join(dataDir, "chromium"), executable: process.env.BROWSER_EXECUTABLE }),
    unknownRef: `0@${join(root, "bs_unknown")}`,
    close: () => rm(dataDir, { recursive: true, force: true }),
  };
});
