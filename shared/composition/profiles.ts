import { profilesCore } from "../domain/profiles.ts";
import { perConfig } from "./config.ts";
import { connectionStore, profileStore } from "./table.ts";

export const profiles = perConfig((config) => {
  return profilesCore({ profiles: profileStore(config), connections: connectionStore(config) });
});
