import { profileSessionsCore } from "../domain/profile-sessions.ts";
import { archives } from "./archives.ts";
import { perConfig } from "./config.ts";
import { profileStore } from "./table.ts";

export const profileSessions = perConfig((config) => profileSessionsCore({ profiles: profileStore(config), archives: archives(config) }));
