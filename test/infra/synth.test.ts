import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { lambdaBundle } from "../../infra/constructs/bundling.ts";
import { authConnectionApp } from "../../infra/stack.ts";

type LambdaFunction = { Properties: { Description: string; Code: { S3Key: string } } };

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
}, 300_000);

describe("cdk synth with bundling", () => {
  it("bundles every function into a minified ESM file with its source map", () => {
    for (const fn of functions) {
      const file = bundleOf(fn);
      expect(existsSync(file), fn.Properties.Description).toBe(true);
      expect(existsSync(`${file}.map`), fn.Properties.Description).toBe(true);
      expect(readFileSync(file, "utf8").startsWith(lambdaBundle.banner), fn.Properties.Description).toBe(true);
    }
  });

  it("leaves the AWS SDK to the runtime exactly when the bundle options say so", () => {
    for (const fn of functions) {
      const importsSdk = /from"@aws-sdk\//.test(readFileSync(bundleOf(fn), "utf8"));
      expect(importsSdk, fn.Properties.Description).toBe(!lambdaBundle.bundleAwsSdk);
    }
  });
});
