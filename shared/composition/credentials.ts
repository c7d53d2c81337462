import { credentialsCore } from "../domain/credentials.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { credentialStore } from "./credential-records.ts";
import { secretBox } from "./secrets.ts";
import { connectionStore } from "./table.ts";

/** The credentials core; login flows use its `forLogin` and `saveFromLogin`. */
export const credentials = perConfig((config) =>
  credentialsCore({ credentials: credentialStore(config), connections: connectionStore(config), box: secretBox(config), policy: targetPolicy(config) }),
);
