import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultProvider } from "../../infra/lambda-runtime/credentials.ts";

afterEach(() => vi.unstubAllEnvs());

describe("the Lambda bundles' credential provider", () => {
  it("answers with the role credentials Lambda puts in the environment", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", "ASIAEXAMPLEKEY");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "example-secret");
    vi.stubEnv("AWS_SESSION_TOKEN", "example-session-token");
    const credentials = await defaultProvider()();
    expect(credentials).toMatchObject({ accessKeyId: "ASIAEXAMPLEKEY", secretAccessKey: "example-secret", sessionToken: "example-session-token" });
  });

  it("fails, rather than looking elsewhere, when the environment holds none", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", "");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "");
    await expect(defaultProvider()()).rejects.toThrow(/environment/i);
  });
});
