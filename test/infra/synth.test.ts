import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { findPackageJSON } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Grant } from "#shared/grants.ts";
import { authorizer, corsPreflight, routes } from "#shared/routes.ts";
import { workflowTasks, type WorkflowTask } from "#shared/step-functions/definition.ts";
import { browserPackages, lambdaBundle } from "../../infra/constructs/bundling.ts";
import { authConnectionApp } from "../../infra/stack.ts";
import { patientMs } from "../support/patience.ts";

type LambdaFunction = { Properties: { Description: string; Code: { S3Key: string } } };

const browserHandlers = Object.values(workflowTasks as Record<string, WorkflowTask>)
  .filter((task) => task.runsBrowser)
  .map((task) => task.handler);
const runsBrowser = (fn: LambdaFunction) => browserHandlers.includes(fn.Properties.Description.split(": ").at(-1) ?? "");
/** Lambda's limit on a function's code, unzipped. */
const maxUnzippedCodeBytes = 250 * 1024 * 1024;

function bytesUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((total, entry) => total + statSync(join(entry.parentPath, entry.name)).size, 0);
}

let outdir: string;
let functions: LambdaFunction[];

const bundleOf = (fn: LambdaFunction) => join(outdir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, "")}`, "index.mjs");

beforeAll(() => {
  // A full synth, bundling included, with the local esbuild: no Docker, no network.
  const app = new App();
  const stack = authConnectionApp(app);
  const assembly = app.synth();
  outdir = assembly.directory;
  functions = Object.values(Template.fromStack(stack).findResources("AWS::Lambda::Function")) as LambdaFunction[];
}, patientMs(300_000));

// Each synth writes the functions' assets, Chromium three times among them.
afterAll(() => rm(outdir, { recursive: true, force: true }));

describe("cdk synth with bundling", () => {
  it("bundles every function into a minified ESM file with its source map", () => {
    for (const fn of functions) {
      const file = bundleOf(fn);
      expect(existsSync(file), fn.Properties.Description).toBe(true);
      expect(existsSync(`${file}.map`), fn.Properties.Description).toBe(true);
      expect(readFileSync(file, "utf8").startsWith(lambdaBundle.banner), fn.Properties.Description).toBe(true);
    }
  });

  it("gives each function's AWS calls the SDK's default credential chain, and a function that calls no AWS service no SDK", () => {
    if (!lambdaBundle.bundleAwsSdk) return;
    for (const fn of functions) {
      const { sources } = JSON.parse(readFileSync(`${bundleOf(fn)}.map`, "utf8")) as { sources: string[] };
      const carriesClient = sources.some((source) => source.includes("@aws-sdk/client-"));
      expect(sources.some((source) => source.includes("@aws-sdk/credential-provider-node/")), fn.Properties.Description).toBe(carriesClient);
    }
  });

  it("carries exactly the AWS clients its grants let the function use", () => {
    if (!lambdaBundle.bundleAwsSdk) return;
    const grantsOf = new Map<string, readonly Grant[]>([
      ...routes.map((route) => [route.handler, route.grants] as const),
      [authorizer.handler, authorizer.grants],
      [corsPreflight.handler, corsPreflight.grants],
      ...Object.values(workflowTasks).map((task) => [task.handler, task.grants] as const),
    ]);
    const clients: { module: string; usedWith: readonly Grant[] }[] = [
      { module: "@aws-sdk/client-dynamodb/", usedWith: ["table:read", "table:write"] },
      { module: "@aws-sdk/lib-dynamodb/", usedWith: ["table:read", "table:write"] },
      { module: "@aws-sdk/client-s3/", usedWith: ["archives:read", "archives:write"] },
      { module: "@aws-sdk/client-sfn/", usedWith: ["workflow:start", "workflow:stop", "workflow:signal"] },
      { module: "@aws-sdk/client-kms/", usedWith: ["secrets:use", "browsers:lease"] },
      { module: "@aws-sdk/client-ecs/", usedWith: ["browsers:lease"] },
    ];
    for (const fn of functions) {
      const handler = fn.Properties.Description.split(": ").at(-1) ?? "";
      const grants = grantsOf.get(handler);
      expect(grants, fn.Properties.Description).toBeDefined();
      const { sources } = JSON.parse(readFileSync(`${bundleOf(fn)}.map`, "utf8")) as { sources: string[] };
      const carried = clients.filter((client) => sources.some((source) => source.includes(client.module))).map((client) => client.module);
      const granted = clients.filter((client) => client.usedWith.some((grant) => grants?.includes(grant))).map((client) => client.module);
      expect(carried, fn.Properties.Description).toEqual(granted);
    }
  });

  it("leaves the AWS SDK to the runtime exactly when the bundle options say so", () => {
    for (const fn of functions) {
      const importsSdk = /from"@aws-sdk\//.test(readFileSync(bundleOf(fn), "utf8"));
      expect(importsSdk, fn.Properties.Description).toBe(!lambdaBundle.bundleAwsSdk);
    }
  });

  it("ships the zstd decoder's worker next to every bundle that starts it, and in no other", () => {
    const startsDecoder = (fn: LambdaFunction) =>
      (JSON.parse(readFileSync(`${bundleOf(fn)}.map`, "utf8")) as { sources: string[] }).sources.some((source) => source.endsWith("shared/archive/zstd-decoder-thread.ts"));
    expect(functions.filter(startsDecoder).map((fn) => fn.Properties.Description.split(": ").at(-1))).toContain("functions/http/profiles/download.ts");
    for (const fn of functions) {
      const worker = join(bundleOf(fn), "..", "zstd-decoder-worker.mjs");
      expect(existsSync(worker), fn.Properties.Description).toBe(startsDecoder(fn));
      expect(existsSync(`${worker}.map`), fn.Properties.Description).toBe(startsDecoder(fn));
    }
  });

  it("ships the hosted login page beside the page function's bundle and its script and style beside the asset function's, and nothing of them with any other", () => {
    const handlerOf = (fn: LambdaFunction) => fn.Properties.Description.split(": ").at(-1);
    const beside: Record<string, string[]> = { "functions/http/hosted/page.ts": ["page.html"], "functions/http/hosted/asset.ts": ["assets/login.css", "assets/login.js"] };
    for (const fn of functions) {
      const assetDir = dirname(bundleOf(fn));
      const shipped = ["page.html", "assets/login.css", "assets/login.js"].filter((file) => existsSync(join(assetDir, file)));
      expect(shipped, fn.Properties.Description).toEqual(beside[handlerOf(fn) ?? ""] ?? []);
      for (const file of shipped) expect(readFileSync(join(assetDir, file), "utf8"), file).toBe(readFileSync(`shared/hosted-login/${file}`, "utf8"));
    }
  });

  it("ships the login browser's packages, Chromium's brotli files included, with each function that runs it, and with no other", () => {
    const chromiumBin = join(dirname(findPackageJSON("@sparticuz/chromium", import.meta.url)!), "bin");
    expect(browserHandlers).toHaveLength(3);
    for (const fn of functions) {
      const assetDir = dirname(bundleOf(fn));
      expect(existsSync(join(assetDir, "node_modules")), fn.Properties.Description).toBe(runsBrowser(fn));
      if (!runsBrowser(fn)) continue;
      for (const name of browserPackages) expect(existsSync(join(assetDir, "node_modules", name, "package.json")), `${fn.Properties.Description} ${name}`).toBe(true);
      for (const file of readdirSync(chromiumBin)) {
        expect(statSync(join(assetDir, "node_modules/@sparticuz/chromium/bin", file)).size, file).toBe(statSync(join(chromiumBin, file)).size);
      }
      expect(bytesUnder(assetDir), fn.Properties.Description).toBeLessThan(maxUnzippedCodeBytes);
    }
  });

  it("leaves the browser's packages out of the bundle, and the bundle imports them from its own asset", async () => {
    const browserFunctions = functions.filter(runsBrowser);
    expect(browserFunctions).toHaveLength(browserHandlers.length);
    const env: NodeJS.ProcessEnv = { ...process.env, SHIPPED_PACKAGES: JSON.stringify(browserPackages) };
    // As in the tests' own runs, outside Lambda: no Lambda-only launch flags, no Lambda environment set up.
    delete env.AWS_LAMBDA_FUNCTION_NAME;
    const script = "await import('./index.mjs'); for (const name of JSON.parse(process.env.SHIPPED_PACKAGES)) await import(name);";
    for (const fn of browserFunctions) {
      const { sources } = JSON.parse(readFileSync(`${bundleOf(fn)}.map`, "utf8")) as { sources: string[] };
      expect(sources.filter((source) => browserPackages.some((name) => source.includes(`node_modules/${name}/`))), fn.Properties.Description).toEqual([]);
      // Run from the asset, outside the repository's node_modules: bare names resolve only to what the asset carries.
      await expect(promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: dirname(bundleOf(fn)), env }), fn.Properties.Description).resolves.toBeDefined();
    }
  }, patientMs(60_000));
});
