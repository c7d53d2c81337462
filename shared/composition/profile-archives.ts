import { profileArchivesCore } from "../domain/profile-archives.ts";
import { archives } from "./archives.ts";
import { perConfig } from "./config.ts";
import { table } from "./table.ts";

export const profileArchives = perConfig((config) => profileArchivesCore({ profiles: table(config).profiles, archives: archives(config).store }));
