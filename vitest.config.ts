import { defineConfig } from "vitest/config";
import { patientMs } from "./test/support/patience.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/quiet-output.ts"],
    // A test's output (its console and the service's logs, see quiet-output.ts) is printed only when it fails.
    silent: "passed-only",
    testTimeout: patientMs(60_000),
    hookTimeout: patientMs(120_000),
  },
});
