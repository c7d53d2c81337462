import { KMSClient } from "@aws-sdk/client-kms";
import { kmsDataKeys, kmsEnvelopeBox } from "../secrets/kms-envelope.ts";
import { localKeyFileBox } from "../secrets/local-key-file.ts";
import { perConfig } from "./config.ts";
import { outagesAsServiceUnavailable, sdkClientSettings } from "./sdk-settings.ts";

/** A key file in local mode (the local stack sets SECRETS_KEY_FILE); a KMS envelope under KMS_KEY_ID in AWS. */
export const secretBox = perConfig((config) => {
  if (config.DEPLOYMENT_MODE === "local") {
    if (!config.SECRETS_KEY_FILE) throw new Error("invalid configuration: SECRETS_KEY_FILE is required in local mode");
    return localKeyFileBox(config.SECRETS_KEY_FILE);
  }
  if (!config.KMS_KEY_ID) throw new Error("invalid configuration: KMS_KEY_ID is required in aws mode (the stack sets it)");
  const kms = new KMSClient(sdkClientSettings(config, undefined));
  outagesAsServiceUnavailable(kms);
  return kmsEnvelopeBox(kmsDataKeys(kms, config.KMS_KEY_ID));
});
