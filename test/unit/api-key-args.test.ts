import { describe, expect, it } from "vitest";
import { parseApiKeyArgs } from "../../scripts/api-key-args.ts";

describe("npm run api-key's arguments", () => {
  it("mints into the local service's data by default and into the deployed table with --aws", () => {
    expect(parseApiKeyArgs(["--org", "acme"])).toEqual({ mint: { org: "acme", into: "local" } });
    expect(parseApiKeyArgs(["--org", "acme", "--aws"])).toEqual({ mint: { org: "acme", into: "aws" } });
    expect(parseApiKeyArgs(["--aws", "--org=acme"])).toEqual({ mint: { org: "acme", into: "aws" } });
  });

  it("shows the usage for --help, and with exit code 2 and the problem when --org is missing or an option is unknown", () => {
    expect(parseApiKeyArgs(["--help"])).toEqual({ usage: { exitCode: 0 } });
    expect(parseApiKeyArgs(["--aws"])).toEqual({ usage: { exitCode: 2, problem: "--org <name> is required" } });
    expect(parseApiKeyArgs([])).toEqual({ usage: { exitCode: 2, problem: "--org <name> is required" } });
    expect(parseApiKeyArgs(["--org", "acme", "--region", "eu-west-1"])).toMatchObject({ usage: { exitCode: 2, problem: expect.stringContaining("--region") } });
    expect(parseApiKeyArgs(["--org"])).toMatchObject({ usage: { exitCode: 2, problem: expect.stringContaining("--org") } });
  });
});
