import type { TableClient } from "./table-client.ts";
import type { ApiKeyStore } from "../domain/api-keys.ts";
import { keys } from "./keys.ts";

export function dynamoApiKeyStore(db: TableClient, tableName: string): ApiKeyStore {
  return {
    async put(record) {
      await db.put({ TableName: tableName, Item: { ...keys.apiKey(record.key_hash), entity: "api_key", ...record } });
    },
    async findOrg(keyHash) {
      const result = await db.get({ TableName: tableName, Key: keys.apiKey(keyHash) });
      return result.Item?.org as string | undefined;
    },
  };
}
