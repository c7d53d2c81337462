/**
 * `npm run bench [-- section ...]`: every section by default. Figures go to stdout; progress to
 * stderr. Exits non-zero when a section had failed calls, never for a missed target (targets
 * are printed next to the figures).
 */
import { startLocalStack, type LocalStack } from "../infra/local/stack.ts";
import { connectionsBench } from "./connections.ts";
import { bundleBench } from "./bundles.ts";
import { downloadBench } from "./downloads.ts";
import { loginBench } from "./logins.ts";
import { poolBench } from "./pools.ts";

type Section = { needsStack: true; run(stack: LocalStack): Promise<string> } | { needsStack: false; run(): Promise<string> };

/** A section whose bench says whether any call failed; a failure makes the whole run exit non-zero. */
function exitingOnFailure(bench: (stack: LocalStack) => Promise<{ report: string; failed: boolean }>): Section {
  return {
    needsStack: true,
    async run(stack) {
      const { report, failed } = await bench(stack);
      if (failed) process.exitCode = 1;
      return report;
    },
  };
}

const sections: Record<string, Section> = {
  connections: exitingOnFailure(connectionsBench),
  pools: { needsStack: true, run: poolBench },
  logins: exitingOnFailure(loginBench),
  downloads: { needsStack: false, run: downloadBench },
  bundles: { needsStack: false, run: bundleBench },
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in sections));
if (unknown.length) {
  process.stderr.write(`unknown bench section(s): ${unknown.join(", ")}; known: ${Object.keys(sections).join(", ")}\n`);
  process.exit(2);
}
const chosen = (requested.length ? requested : Object.keys(sections))
  .map((name) => [name, sections[name] as Section] as const)
  .sort(([, a], [, b]) => Number(b.needsStack) - Number(a.needsStack));

let stack: LocalStack | undefined;
let stopping: Promise<void> | undefined;
const stopStack = () => (stopping ??= stack?.stop() ?? Promise.resolve());
// Without this an interrupted run would leave DynamoDB Local's JVM (and browsers) behind.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    process.stderr.write(`${signal}: stopping the local stack...\n`);
    void stopStack().finally(() => process.exit(130));
  });
}

try {
  for (const [name, section] of chosen) {
    process.stderr.write(`\n== ${name} ==\n`);
    if (section.needsStack) {
      if (!stack) {
        process.stderr.write("starting the local stack...\n");
        stack = await startLocalStack({ port: 0 });
      }
      process.stdout.write(await section.run(stack));
    } else {
      // Its own processes only: the stack's (DynamoDB Local, browsers) would share the cores.
      await stopStack();
      process.stdout.write(await section.run());
    }
  }
} catch (error) {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await stopStack();
}
