/**
 * Lambda bundle bench: builds every function the stack deploys with the stack's own esbuild
 * options, with the AWS SDK left to the runtime and bundled, and times a fresh Node process
 * importing each bundle (a cold-start proxy) against a bundle holding only the SDK's DynamoDB
 * document client. Sizes are listed, not held to a target: import time is what a cold start pays.
 * The functions that run the login browser are listed but held to no import-time target: their
 * cold start is dominated by Chromium's (unpacked and launched), which the logins bench reports.
 */
import { build } from "esbuild";
import { execFile } from "node:child_process";
import { rm, stat } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { authorizer, routes } from "#shared/routes.ts";
import { workflowTasks, type WorkflowTask } from "#shared/step-functions/definition.ts";
import { esbuildOptions, lambdaBundle } from "../infra/constructs/bundling.ts";
import { percentile } from "./stats.ts";
import { renderTable } from "./table.ts";

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
/** Inside node_modules, so a bundle that leaves the SDK out resolves it as the Lambda runtime would. */
const outDir = fileURLToPath(new URL("../node_modules/.cache/bundle-bench/", import.meta.url));
const importRuns = 9;
const maxImportRatio = 1.5;
/** A function that carries the login engine (HTML parser, cookie jar, public suffix list) is held to this instead. */
const maxLoginEngineImportRatio = 2.5;
const loginEngineModule = "shared/login/http/engine.ts";
/** The floor: a function holding only the AWS SDK's DynamoDB document client. */
const sdkBaseline = {
  name: "DynamoDB client only (AWS SDK)",
  route: false,
  source: `
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
export const handler = async () => DynamoDBDocumentClient.from(new DynamoDBClient({})).config.region;
`,
};

interface Entry {
  name: string;
  /** A route's function (not the authorizer or a workflow task). */
  route: boolean;
  entryPoint?: string;
  source?: string;
  /** Runs the login browser: built as deployed, with the browser's packages left out and loaded from node_modules. */
  runsBrowser?: boolean;
}

interface Figures {
  bytes: number;
  importMs: number;
}

interface Bundled {
  file: string;
  carriesLoginEngine: boolean;
}

const runNode = promisify(execFile);

async function bundle(entry: Entry, bundleAwsSdk: boolean): Promise<Bundled> {
  const outfile = `${outDir}${bundleAwsSdk ? "sdk-bundled" : "sdk-external"}/${entry.name}.mjs`;
  const source = entry.entryPoint ? { entryPoints: [entry.entryPoint] } : { stdin: { contents: entry.source ?? "", resolveDir: repoRoot, loader: "ts" as const } };
  const { metafile } = await build({ ...esbuildOptions(bundleAwsSdk, entry.runsBrowser), ...source, absWorkingDir: repoRoot, outfile, logLevel: "error", metafile: true });
  return { file: outfile, carriesLoginEngine: loginEngineModule in metafile.inputs };
}

async function importMs(file: string): Promise<number> {
  const script = "const start = performance.now(); await import(process.env.BUNDLE_URL); process.stdout.write(String(performance.now() - start));";
  const { stdout } = await runNode(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, BUNDLE_URL: pathToFileURL(file).href } });
  return Number(stdout);
}

/**
 * Median over fresh processes, only the import timed (not Node's own start). Each round imports
 * every bundle once, so a burst of load from elsewhere on the machine hits all of them alike
 * rather than a few.
 */
async function medianImportMs(files: readonly string[]): Promise<number[]> {
  const times = files.map((): number[] => []);
  for (let round = 0; round < importRuns; round++) {
    for (const [index, file] of files.entries()) times[index]!.push(await importMs(file));
  }
  return times.map((samples) => percentile(Float64Array.from(samples).sort(), 50));
}

const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const ms = (value: number) => value.toFixed(1);

export async function bundleBench(): Promise<string> {
  const entries: Entry[] = [
    ...routes.map((route) => ({ name: route.name, route: true, entryPoint: route.handler })),
    { name: authorizer.name, route: false, entryPoint: authorizer.handler },
    ...Object.values(workflowTasks).map((task: WorkflowTask) => ({ name: task.functionName, route: false, entryPoint: task.handler, runsBrowser: task.runsBrowser })),
    sdkBaseline,
  ];
  await rm(outDir, { recursive: true, force: true });
  const files: { external: Bundled; bundled: Bundled }[] = [];
  for (const entry of entries) files.push({ external: await bundle(entry, false), bundled: await bundle(entry, true) });
  const importTimes = await medianImportMs(files.flatMap((file) => [file.external.file, file.bundled.file]));
  const figures = async (file: string, index: number): Promise<Figures> => ({ bytes: (await stat(file)).size, importMs: importTimes[index]! });
  const results = await Promise.all(
    entries.map(async (entry, index) => ({
      entry,
      carriesLoginEngine: files[index]!.bundled.carriesLoginEngine,
      external: await figures(files[index]!.external.file, 2 * index),
      bundled: await figures(files[index]!.bundled.file, 2 * index + 1),
    })),
  );

  const deployed = (figures: { external: Figures; bundled: Figures }) => (lambdaBundle.bundleAwsSdk ? figures.bundled : figures.external);
  const baseline = results.find((result) => result.entry === sdkBaseline);
  if (!baseline) throw new Error("the baseline bundle was not measured");
  // Issue 8's import-time targets hold every function but those that run the login browser.
  const functions = results.filter((result) => result !== baseline && !result.entry.runsBrowser);
  // The floor is the faster DynamoDB-only bundle, so both ways of shipping the SDK are held to the same mark.
  const floorMs = Math.min(baseline.external.importMs, baseline.bundled.importMs);
  const slowest = (among: typeof functions) => Math.max(...among.map((result) => deployed(result).importMs / floorMs));
  const slowestRoute = slowest(functions.filter((result) => result.entry.route && !result.carriesLoginEngine));
  const slowestOther = slowest(functions.filter((result) => !result.entry.route && !result.carriesLoginEngine));
  const slowestLoginEngine = slowest(functions.filter((result) => result.carriesLoginEngine));
  const verdict = (ratio: number, target: number) => `${ratio.toFixed(2)}x, ${ratio <= target ? "met" : "MISSED"}`;

  const header = ["function", "login engine", "KB (SDK external)", "import ms", "x floor", "KB (SDK bundled)", "import ms", "x floor"];
  const rows = results.map(({ entry, carriesLoginEngine, external, bundled }) => [
    entry.name,
    entry.runsBrowser ? "browser (no target)" : carriesLoginEngine ? "yes" : "",
    kb(external.bytes),
    ms(external.importMs),
    (external.importMs / floorMs).toFixed(2),
    kb(bundled.bytes),
    ms(bundled.importMs),
    (bundled.importMs / floorMs).toFixed(2),
  ]);
  return [
    `Lambda bundles (minified ESM, node22; import time = median of ${importRuns} fresh processes; deployed: SDK ${lambdaBundle.bundleAwsSdk ? "bundled" : "external"})`,
    renderTable(header, rows),
    `floor: the faster AWS SDK DynamoDB-document-client-only bundle, ${ms(floorMs)} ms`,
    `target: every route's import within ${maxImportRatio}x of the floor: slowest route ${verdict(slowestRoute, maxImportRatio)}`,
    `  the authorizer and workflow tasks, against the same target: slowest ${verdict(slowestOther, maxImportRatio)}`,
    `target: functions carrying the login engine within ${maxLoginEngineImportRatio}x: slowest ${verdict(slowestLoginEngine, maxLoginEngineImportRatio)}`,
    `no target: ${results.filter((result) => result.entry.runsBrowser).map((result) => result.entry.name).join(", ")}, which run the login browser (cold start with Chromium's launch: npm run bench -- logins)`,
  ].join("\n");
}
