import { apiKeysCore } from "../domain/api-keys.ts";
import { perConfig } from "./config.ts";
import { apiKeyStore } from "./table.ts";

export const apiKeys = perConfig((config) => apiKeysCore({ store: apiKeyStore(config), cacheSeconds: config.API_KEY_CACHE_SECONDS }));
