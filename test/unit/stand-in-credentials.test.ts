import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { useStandInCredentials } from "../../infra/local/stand-in-credentials.ts";

afterEach(() => vi.unstubAllEnvs());

it("gives the local runtime's clients the stand-ins' key even where a profile is selected", async () => {
  const directory = mkdtempSync(join(tmpdir(), "acs-profile-"));
  try {
    writeFileSync(join(directory, "credentials"), "[someone]\naws_access_key_id = AKIASOMEONESPROFILE\naws_secret_access_key = real-secret\n");
    vi.stubEnv("AWS_SHARED_CREDENTIALS_FILE", join(directory, "credentials"));
    vi.stubEnv("AWS_PROFILE", "someone");
    vi.stubEnv("AWS_SESSION_TOKEN", "someone's session");
    useStandInCredentials();
    const credentials = await new DynamoDBClient({ region: "us-east-1" }).config.credentials();
    expect(credentials.accessKeyId).toBe("S3RVER");
    expect(credentials.sessionToken).toBeUndefined();
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
