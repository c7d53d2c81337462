import { GetCommand, PutCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { ApiKeyStore } from "../domain/api-keys.ts";
import { keys } from "./keys.ts";

export function dynamoApiKeyStore(db: DynamoDBDocumentClient, tableName: string): ApiKeyStore {
  return {
    async put(record) {
      await db.send(new PutCommand({ TableName: tableName, Item: { ...keys.apiKey(record.key_hash), entity: "api_key", ...record } }));
    },
    async findOrg(keyHash) {
      const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.apiKey(keyHash) }));
      return result.Item?.org as string | undefined;
    },
  };
}
