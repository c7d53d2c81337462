import { GenerateMacCommand, KMSClient } from "@aws-sdk/client-kms";
import { mockClient } from "aws-sdk-client-mock";
import { describe, expect, it } from "vitest";
import { kmsTaskAdminSecrets } from "#shared/browsers/task-admin-secrets.ts";

function kmsAnswering(mac: Uint8Array | undefined) {
  const kms = new KMSClient({ region: "eu-west-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } });
  const mock = mockClient(kms);
  mock.on(GenerateMacCommand).resolves({ Mac: mac, MacAlgorithm: "HMAC_SHA_256" });
  return { kms, mock };
}

describe("browser tasks' admin secrets from KMS", () => {
  it("is the HMAC of the session id under the pool's KMS key, as base64url", async () => {
    const { kms, mock } = kmsAnswering(Uint8Array.from([0xfb, 0xff, 0x00, 0x3e]));
    const secret = await kmsTaskAdminSecrets(kms, "arn:aws:kms:eu-west-1:123456789012:key/pool-admin")("bs_one");

    expect(secret).toBe("-_8APg");
    const [call] = mock.commandCalls(GenerateMacCommand);
    expect(call?.args[0].input).toEqual({
      KeyId: "arn:aws:kms:eu-west-1:123456789012:key/pool-admin",
      MacAlgorithm: "HMAC_SHA_256",
      Message: Buffer.from("bs_one"),
    });
  });

  it("fails rather than answer an empty secret when KMS gives no MAC", async () => {
    const { kms } = kmsAnswering(undefined);
    await expect(kmsTaskAdminSecrets(kms, "pool-admin")("bs_one")).rejects.toThrow("without a MAC");
  });
});
