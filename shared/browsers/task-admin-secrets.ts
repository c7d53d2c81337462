import { GenerateMacCommand, type KMSClient } from "@aws-sdk/client-kms";

/**
 * Each browser task's admin secret: an HMAC of its session id under a KMS key, so the key never
 * leaves KMS, no secret is stored per browser, and any pool function allowed `kms:GenerateMac` on
 * that key can recompute a task's secret.
 */
export function kmsTaskAdminSecrets(kms: KMSClient, keyId: string): (sessionId: string) => Promise<string> {
  return async (sessionId) => {
    const { Mac } = await kms.send(new GenerateMacCommand({ KeyId: keyId, MacAlgorithm: "HMAC_SHA_256", Message: Buffer.from(sessionId) }));
    if (!Mac) throw new Error("KMS answered GenerateMac without a MAC");
    return Buffer.from(Mac).toString("base64url");
  };
}
