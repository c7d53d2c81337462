import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "../../infra/local/dynamodb-local.ts";
import { startS3Local } from "../../infra/local/s3-local.ts";
import { useStandInCredentials } from "../../infra/local/stand-in-credentials.ts";

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    s3Endpoint: string;
    /** Where the code under test's own output goes (test/support/quiet-output.ts). */
    outputFile: string;
  }
}

/**
 * One in-memory DynamoDB Local and one s3rver on a temp dir for the whole run; each test file
 * works in its own table, bucket or org.
 */
export default async function setup(project: TestProject) {
  const outputFile = newOutputFile(join(project.config.root, "test-results"));
  project.provide("outputFile", outputFile);
  // Test files build their own clients to the stand-ins; their processes inherit this environment.
  useStandInCredentials();
  // s3rver first: it runs in-process, so a failure here leaves no Java child behind.
  const s3 = await startS3Local();
  project.provide("s3Endpoint", s3.endpoint);
  const dynamo = await startDynamoDbLocal();
  project.provide("dynamoEndpoint", dynamo.endpoint);
  return async () => {
    await Promise.all([dynamo.stop(), s3.stop()]);
    process.stdout.write(`Service logs and bundling output of this run, by test: ${relative(process.cwd(), outputFile)}\n`);
  };
}

/** How long a run's output file is kept: long enough to look back at yesterday's runs, short enough to keep the directory small. */
const keptForMs = 24 * 60 * 60 * 1000;

/**
 * A file of this run's own, named by its start so the newest sorts last: two runs at once (two
 * terminals on one checkout) do not write over each other. Files of runs older than `keptForMs` go.
 */
function newOutputFile(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir).filter((entry) => /^output-.+\.log$/.test(entry))) {
    const file = join(dir, name);
    // Another run starting at the same time may have removed it already.
    const modified = statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (modified < Date.now() - keptForMs) rmSync(file, { force: true });
  }
  const file = join(dir, `output-${new Date().toISOString().replaceAll(":", "-")}.log`);
  writeFileSync(file, "");
  return file;
}
