/**
 * Lambda bundle bench: builds every function the stack deploys with the stack's own esbuild
 * options, with the AWS SDK left to the runtime and bundled, and times a fresh Node process
 * importing each bundle (a cold-start proxy) against a bundle holding only a DynamoDB client.
 */
import { build } from "esbuild";
import { execFile } from "node:child_process";
import { rm, stat } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { authorizer, routes } from "#shared/routes.ts";
import { workflowTasks } from "#shared/workflow/definition.ts";
import { esbuildOptions, lambdaBundle } from "../infra/constructs/bundling.ts";
import { percentile } from "./stats.ts";
import { renderTable } from "./table.ts";

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
/** Inside node_modules, so a bundle that leaves the SDK out resolves it as the Lambda runtime would. */
const outDir = fileURLToPath(new URL("../node_modules/.cache/bundle-bench/", import.meta.url));
const importRuns = 9;
const maxRouteBundleBytes = 400 * 1024;
const maxImportRatio = 1.5;
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
/** A stricter floor: only the table client the functions use instead (shared/store/table-client.ts). */
const ownBaseline = {
  name: "table client only (this service's)",
  route: false,
  source: `
import { createTableClient } from "./shared/store/table-client.ts";
export const handler = async () => createTableClient({ region: "us-east-1" });
`,
};

interface Entry {
  name: string;
  /** A route's function; the 400 KB target applies to these. */
  route: boolean;
  entryPoint?: string;
  source?: string;
}

interface Figures {
  bytes: number;
  importMs: number;
}

const runNode = promisify(execFile);

async function bundle(entry: Entry, bundleAwsSdk: boolean): Promise<string> {
  const outfile = `${outDir}${bundleAwsSdk ? "sdk-bundled" : "sdk-external"}/${entry.name}.mjs`;
  const source = entry.entryPoint ? { entryPoints: [entry.entryPoint] } : { stdin: { contents: entry.source ?? "", resolveDir: repoRoot, loader: "ts" as const } };
  await build({ ...esbuildOptions(bundleAwsSdk), ...source, absWorkingDir: repoRoot, outfile, logLevel: "error" });
  return outfile;
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
    ...Object.values(workflowTasks).map((task) => ({ name: task.functionName, route: false, entryPoint: task.handler })),
    sdkBaseline,
    ownBaseline,
  ];
  await rm(outDir, { recursive: true, force: true });
  const files: { external: string; bundled: string }[] = [];
  for (const entry of entries) files.push({ external: await bundle(entry, false), bundled: await bundle(entry, true) });
  const importTimes = await medianImportMs(files.flatMap((file) => [file.external, file.bundled]));
  const figures = async (file: string, index: number): Promise<Figures> => ({ bytes: (await stat(file)).size, importMs: importTimes[index]! });
  const results = await Promise.all(
    entries.map(async (entry, index) => ({
      entry,
      external: await figures(files[index]!.external, 2 * index),
      bundled: await figures(files[index]!.bundled, 2 * index + 1),
    })),
  );

  const deployed = (figures: { external: Figures; bundled: Figures }) => (lambdaBundle.bundleAwsSdk ? figures.bundled : figures.external);
  const [baseline, ownFloor] = [sdkBaseline, ownBaseline].map((floor) => results.find((result) => result.entry === floor));
  if (!baseline || !ownFloor) throw new Error("a baseline bundle was not measured");
  const functions = results.filter((result) => result !== baseline && result !== ownFloor);
  const largestRoute = Math.max(...functions.filter((result) => result.entry.route).map((result) => deployed(result).bytes));
  // The floor is the faster DynamoDB-only bundle, so both ways of shipping the SDK are held to the same mark.
  const floorMs = Math.min(baseline.external.importMs, baseline.bundled.importMs);
  const slowest = (among: typeof functions, floor: number) => Math.max(...among.map((result) => deployed(result).importMs / floor));
  const routeFunctions = functions.filter((result) => result.entry.route);
  const slowestRoute = slowest(routeFunctions, floorMs);
  const slowestFunction = slowest(functions, floorMs);
  const ownFloorMs = deployed(ownFloor).importMs;
  const slowestRouteOwnFloor = slowest(routeFunctions, ownFloorMs);
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

  const header = ["function", "KB (SDK external)", "import ms", "x floor", "KB (SDK bundled)", "import ms", "x floor"];
  const rows = results.map(({ entry, external, bundled }) => [
    entry.name,
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
    `target: every route bundle under ${kb(maxRouteBundleBytes)} KB: largest ${kb(largestRoute)} KB, ${verdict(largestRoute < maxRouteBundleBytes)}`,
    `target: route import within ${maxImportRatio}x of the faster AWS SDK DynamoDB-only bundle (${ms(floorMs)} ms): slowest route ${slowestRoute.toFixed(2)}x, ${verdict(slowestRoute <= maxImportRatio)}`,
    `  every function, the authorizer and workflow tasks included: slowest ${slowestFunction.toFixed(2)}x, ${verdict(slowestFunction <= maxImportRatio)}`,
    `  stricter, against the bundle of this service's table client alone (${ms(ownFloorMs)} ms): slowest route ${slowestRouteOwnFloor.toFixed(2)}x, ${verdict(slowestRouteOwnFloor <= maxImportRatio)}`,
  ].join("\n");
}
