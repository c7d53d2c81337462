import { profilesCore } from "../domain/profiles.ts";
import { perConfig } from "./config.ts";
import { table } from "./table.ts";

export const profiles = perConfig((config) => {
  const { profiles, connections } = table(config);
  return profilesCore({ profiles, connections });
});
