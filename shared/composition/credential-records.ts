import { credentialRecordsCore } from "../domain/credentials.ts";
import { dynamoCredentialStore } from "../store/credentials-store.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { resourceName } from "../config.ts";
import { tableClient } from "./table.ts";

export const credentialStore = perConfig((config) => dynamoCredentialStore(tableClient(config), resourceName(config, "TABLE_NAME")));

/** Get, list and delete: apart from `credentials`, so their bundles do not import the secret box. */
export const credentialRecords = perConfig((config) => credentialRecordsCore({ credentials: credentialStore(config), policy: targetPolicy(config) }));
