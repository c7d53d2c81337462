import { profileImportCore } from "../domain/profile-import.ts";
import { archives } from "./archives.ts";
import { perConfig } from "./config.ts";
import { profileStore } from "./table.ts";

export const profileImport = perConfig((config) => profileImportCore({ profiles: profileStore(config), archives: archives(config) }));
