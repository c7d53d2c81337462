import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import * as z from "zod/mini";
import { zstdSupportProblem } from "#shared/archive/zstd-support.ts";
import { demoUser, startDemoSite, type DemoSite } from "./demo-site.ts";
import { oneOrgOnly } from "./browser-isolation.ts";
import { runningFile, runningInstance } from "./running.ts";
import { startDefaults } from "./start-defaults.ts";

const unsupported = zstdSupportProblem();
if (unsupported) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(1);
}

const usage = "usage: npm start [-- --no-demo]   (--no-demo: leave the demo website out)\n";
let withDemo: boolean;
try {
  withDemo = parseArgs({ options: { demo: { type: "boolean", default: true } }, allowNegative: true }).values.demo;
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
  process.exit(2);
}

// Loaded once the check has passed: the stack's modules refuse such a Node as they load, with a stack trace.
const { startLocalStack } = await import("./stack.ts");

const port = z.coerce.number().check(z.int(), z.minimum(0), z.maximum(65535));
const env = z
  .object({
    PORT: z._default(port, startDefaults.port),
    DEMO_PORT: z._default(port, startDefaults.demoPort),
    DATA_DIR: z._default(z.string().check(z.minLength(1)), startDefaults.dataDir),
    LOCAL_API_KEY: z.optional(z.string().check(z.minLength(16, "LOCAL_API_KEY must be at least 16 characters"))),
  })
  .safeParse(process.env);
if (!env.success) {
  process.stderr.write(`invalid configuration: ${env.error.issues.map((issue) => issue.message).join("; ")}\n`);
  process.exit(2);
}
const { PORT, DEMO_PORT, DATA_DIR, LOCAL_API_KEY } = env.data;
const dataDir = resolve(DATA_DIR);
const lockFile = runningFile(dataDir);

const running = runningInstance(dataDir);
if (running) {
  process.stderr.write(
    `The service is already running from ${dataDir} (pid ${running.pid}) at ${running.url}.\n` +
      "Stop it with Ctrl-C in its terminal, or use another DATA_DIR.\n",
  );
  process.exit(1);
}

mkdirSync(dataDir, { recursive: true });
writeFileSync(lockFile, JSON.stringify({ pid: process.pid, url: "starting" }));
// Private, as the rest of the data (a crashed run's file included): the stand-ins' endpoints are no business of a pooled browser.
chmodSync(lockFile, 0o600);

let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
let demo: DemoSite | undefined;
try {
  stack = await startLocalStack({ port: PORT, dataDir, apiKey: LOCAL_API_KEY, oneOrgUnlessIsolated: true });
} catch (error) {
  rmSync(lockFile, { force: true });
  const message = error instanceof Error ? error.message : String(error);
  const hint = /EADDRINUSE/.test(message) ? ` (port ${PORT} is taken: set PORT to another one)` : "";
  process.stderr.write(`could not start the service: ${message}${hint}\n`);
  process.exit(1);
}
if (withDemo) {
  try {
    demo = await startDemoSite(DEMO_PORT);
  } catch (error) {
    await stack.stop();
    rmSync(lockFile, { force: true });
    const message = error instanceof Error ? error.message : String(error);
    const hint = /EADDRINUSE/.test(message) ? ` (port ${DEMO_PORT} is taken: set DEMO_PORT to another one, or start with -- --no-demo)` : "";
    process.stderr.write(`could not start the demo site: ${message}${hint}\n`);
    process.exit(1);
  }
}
writeFileSync(
  lockFile,
  JSON.stringify({ pid: process.pid, url: stack.url, dynamoEndpoint: stack.dynamoEndpoint, s3Endpoint: stack.s3Endpoint }),
);
if (stack.browserIsolationProblem) process.stderr.write(`Warning: ${oneOrgOnly(stack.browserIsolationProblem)}\n`);

process.stdout.write(
  [
    `Auth connection service listening on ${stack.url}`,
    `API key (org 'local'): ${stack.apiKey}`,
    ...(demo
      ? [
          `Demo site to log in to: ${demo.url}`,
          `Demo user: ${demoUser.email}, password ${demoUser.password}, TOTP secret ${demoUser.totpSecret}`,
        ]
      : []),
    `Data kept in ${dataDir}`,
    `Try: curl -H 'Authorization: Bearer ${stack.apiKey}' ${stack.url}/auth/connections`,
    "Ctrl-C stops everything.",
    "",
  ].join("\n"),
);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await Promise.all([stack?.stop(), demo?.stop()]);
  rmSync(lockFile, { force: true });
  process.exit(0);
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
