import { build } from "esbuild";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostedLoginAssetTypes } from "#shared/hosted-login/asset-files.ts";
import { copyBesideFiles, esbuildOptions } from "../../../infra/constructs/bundling.ts";

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

let dir: string;

/** Builds a handler as the stack does, with the afterBundling copy, into a directory of its own. */
async function bundled(name: string, entry: string): Promise<{ bundle: string; beside: string[] }> {
  const bundle = join(dir, name, "index.mjs");
  await build({ ...esbuildOptions(), entryPoints: [entry], outfile: bundle, logLevel: "silent" });
  return { bundle, beside: await copyBesideFiles(bundle) };
}

/** Runs the bundle in a process of its own, away from the repository's files, as Lambda would. */
async function invoke(bundle: string, event: Record<string, unknown>): Promise<Answer> {
  const environment = { PATH: process.env.PATH, DEPLOYMENT_MODE: "aws", LOG_LEVEL: "error" };
  const { stdout } = await promisify(execFile)(process.execPath, ["test/support/invoke-handler.ts", bundle, JSON.stringify(event)], { env: environment });
  return (JSON.parse(stdout) as { answer: Answer }).answer;
}

function getEvent(resource: string, path: string, pathParameters: Record<string, string>) {
  return { resource, path, httpMethod: "GET", headers: { host: "auth.example.com" }, pathParameters, queryStringParameters: null, body: null, isBase64Encoded: false, requestContext: { requestId: "req-bundle", path } };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hosted-login-bundle-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the hosted login functions' bundles", () => {
  it("the page's bundle ships page.html beside it and serves it from there", async () => {
    const { bundle, beside } = await bundled("page", "functions/http/hosted/page.ts");

    expect(beside).toEqual(["page.html"]);
    expect((await readdir(join(dir, "page"))).sort()).toEqual(["index.mjs", "index.mjs.map", "page.html"]);
    const answer = await invoke(bundle, getEvent("/login/{id}", "/login/ac_1", { id: "ac_1" }));
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toMatch(/<script type="application\/json" id="page-data">\{"strings":/);
  });

  it("the asset function's bundle ships the script and style beside it and serves them from there", async () => {
    const { bundle, beside } = await bundled("asset", "functions/http/hosted/asset.ts");

    expect(beside.sort()).toEqual([...hostedLoginAssetTypes.keys()].map((name) => `assets/${name}`).sort());
    const script = await invoke(bundle, getEvent("/login-assets/{file}", "/login-assets/login.js", { file: "login.js" }));
    const style = await invoke(bundle, getEvent("/login-assets/{file}", "/login-assets/login.css", { file: "login.css" }));
    expect([script.statusCode, script.headers["content-type"]]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect([style.statusCode, style.headers["content-type"]]).toEqual([200, "text/css; charset=utf-8"]);
  });

  it("another function's bundle gets none of them", async () => {
    const { beside } = await bundled("exchange", "functions/http/connections/exchange.ts");

    expect(beside).toEqual([]);
  });
});

describe("the hosted login page's asset names", () => {
  it("page.html links exactly the assets the asset route serves, by the relative path that works under a stage prefix", async () => {
    const html = await readFile("shared/hosted-login/page.html", "utf8");
    const linked = [...html.matchAll(/\b(?:href|src)="([^"]*)"/g)].map((match) => match[1]);

    expect(linked.sort()).toEqual([...hostedLoginAssetTypes.keys()].map((name) => `../login-assets/${name}`).sort());
  });
});
