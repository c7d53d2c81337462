import { profileArchivesCore } from "../domain/profile-archives.ts";
import { archives } from "./archives.ts";
import { perConfig } from "./config.ts";
import { profileStore } from "./table.ts";

export const profileArchives = perConfig((config) => profileArchivesCore({ profiles: profileStore(config), archives: archives(config) }));
