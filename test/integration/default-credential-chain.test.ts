import { build } from "esbuild";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateApiKey } from "#shared/domain/api-keys.ts";
import { esbuildOptions } from "../../infra/constructs/bundling.ts";
import { fakeAwsService, type Call } from "../support/fake-aws-service.ts";

const profileKeyId = "AKIAPROFILECHAINTEST";
let workDir: string;
let table: Awaited<ReturnType<typeof fakeAwsService>>;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "acs-chain-"));
  // DynamoDB's answer to a GetItem for a key that is not there.
  table = await fakeAwsService(() => ({ status: 200, body: {} }));
});

afterAll(() => {
  table?.server.close();
  rmSync(workDir, { recursive: true, force: true });
});

it("signs a deployed function's AWS calls with a shared config profile's key when the environment holds none", async () => {
  writeFileSync(join(workDir, "config"), "[profile acs-chain]\nregion = eu-west-1\n");
  writeFileSync(join(workDir, "credentials"), `[acs-chain]\naws_access_key_id = ${profileKeyId}\naws_secret_access_key = profile-chain-secret\n`);
  // The authorizer as it deploys: bundled with the stack's own options.
  const bundle = join(workDir, "authorizer.mjs");
  await build({ ...esbuildOptions(), entryPoints: ["functions/authorizer.ts"], outfile: bundle, logLevel: "silent" });

  const environment = {
    PATH: process.env.PATH,
    AWS_CONFIG_FILE: join(workDir, "config"),
    AWS_SHARED_CREDENTIALS_FILE: join(workDir, "credentials"),
    AWS_PROFILE: "acs-chain",
    AWS_EC2_METADATA_DISABLED: "true",
    DYNAMODB_ENDPOINT: table.endpoint,
    // As the stack sets it: in AWS mode no resource has a default name.
    TABLE_NAME: "auth-connections",
  };
  expect(Object.keys(environment).filter((name) => name.startsWith("AWS_ACCESS") || name.startsWith("AWS_SECRET"))).toEqual([]);
  const event = { type: "REQUEST", methodArn: "arn:aws:execute-api:eu-west-1:000000000000:api/prod/GET/profiles", headers: { authorization: `Bearer ${generateApiKey()}` } };
  const { stdout } = await promisify(execFile)(process.execPath, ["test/support/invoke-handler.ts", bundle, JSON.stringify(event)], { env: environment });

  // An unknown key is refused, after the function looked it up in the table with the profile's key.
  expect(JSON.parse(stdout)).toEqual({ error: "Unauthorized" });
  const lookups: Call[] = table.calls.filter((call) => call.headers["x-amz-target"] === "DynamoDB_20120810.GetItem");
  expect(lookups.length).toBe(1);
  expect(lookups[0]?.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${profileKeyId}/\\d{8}/[a-z0-9-]+/dynamodb/aws4_request`));
});
