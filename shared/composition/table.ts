import { dynamoApiKeyStore } from "../store/api-keys-store.ts";
import { dynamoConnectionStore } from "../store/connections-store.ts";
import { createDocumentClient } from "../store/dynamo.ts";
import { dynamoPoolStore } from "../store/pools-store.ts";
import { dynamoProfileStore } from "../store/profiles-store.ts";
import { perConfig } from "./config.ts";

/** Every function reads the table: one DynamoDB client, and the stores over it. */
export const table = perConfig((config) => {
  const db = createDocumentClient({ region: config.AWS_REGION, endpoint: config.DYNAMODB_ENDPOINT });
  return {
    db,
    connections: dynamoConnectionStore(db, config.TABLE_NAME),
    profiles: dynamoProfileStore(db, config.TABLE_NAME),
    pools: dynamoPoolStore(db, config.TABLE_NAME),
    apiKeys: dynamoApiKeyStore(db, config.TABLE_NAME),
  };
});
