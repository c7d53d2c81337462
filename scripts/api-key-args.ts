import { parseArgs } from "node:util";

export const apiKeyUsage = `Mints an API key for an org and prints it once; only its hash is stored.

  npm run api-key -- --org <name>          into the local service's data (DATA_DIR, default .data)
  npm run api-key -- --org <name> --aws    into the deployed table (TABLE_NAME, AWS_REGION and AWS credentials from the environment)
`;

/** What `npm run api-key -- <args>` asks for: a key for `org`, where; or the usage, with the exit code to end on. */
export type ApiKeyCommand = { mint: { org: string; into: "local" | "aws" } } | { usage: { exitCode: 0 | 2; problem?: string } };

export function parseApiKeyArgs(args: string[]): ApiKeyCommand {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { org: { type: "string" }, aws: { type: "boolean", default: false }, help: { type: "boolean" } } }));
  } catch (error) {
    return { usage: { exitCode: 2, problem: error instanceof Error ? error.message : String(error) } };
  }
  if (values.help) return { usage: { exitCode: 0 } };
  if (!values.org) return { usage: { exitCode: 2, problem: "--org <name> is required" } };
  return { mint: { org: values.org, into: values.aws ? "aws" : "local" } };
}
