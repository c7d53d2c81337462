import { submitCore } from "../domain/flows/submit.ts";
import { perConfig } from "./config.ts";
import { secretBox } from "./secrets.ts";
import { connectionStore } from "./table.ts";
import { flowSignal } from "./workflow-engine.ts";

/** The submit route: apart from login, so its function carries neither the login engine nor the archive client. */
export const submissions = perConfig((config) => submitCore({ connections: connectionStore(config), secrets: secretBox(config), signal: flowSignal(config) }));
