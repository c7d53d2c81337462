import { credentialsCore } from "../domain/credentials.ts";
import { dynamoCredentialStore } from "../store/credentials-store.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { secretBox } from "./secrets.ts";
import { tableClient } from "./table.ts";

export const credentialStore = perConfig((config) => dynamoCredentialStore(tableClient(config), config.TABLE_NAME));

/** The credentials core; login flows use its `forLogin` and `saveFromLogin`. */
export const credentials = perConfig((config) =>
  credentialsCore({ credentials: credentialStore(config), box: secretBox(config), policy: targetPolicy(config) }),
);
