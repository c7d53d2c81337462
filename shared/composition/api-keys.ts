import { apiKeysCore } from "../domain/api-keys.ts";
import { perConfig } from "./config.ts";
import { table } from "./table.ts";

export const apiKeys = perConfig((config) => apiKeysCore({ store: table(config).apiKeys, cacheSeconds: config.API_KEY_CACHE_SECONDS }));
