import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { dynamoApiKeyStore } from "../store/api-keys-store.ts";
import { dynamoConnectionStore } from "../store/connections-store.ts";
import { dynamoHandoffStore } from "../store/handoff-store.ts";
import { dynamoPoolStore } from "../store/pools-store.ts";
import { dynamoProfileStore } from "../store/profiles-store.ts";
import { dynamoStreamSlotStore } from "../store/stream-slots-store.ts";
import { perConfig } from "./config.ts";
import { resourceName } from "../config.ts";
import { outagesAsServiceUnavailable, sdkClientSettings } from "./sdk-settings.ts";

/** Every function reads the table: one DynamoDB client per process, shared by the stores. */
export const tableClient = perConfig((config) => {
  const dynamodb = new DynamoDBClient(sdkClientSettings(config, config.DYNAMODB_ENDPOINT));
  outagesAsServiceUnavailable(dynamodb);
  // Optional fields of an entity are left out of its item rather than stored as NULL.
  return DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } });
});

// Marked pure so a bundle drops the stores its function never asks for.
export const connectionStore = /* @__PURE__ */ perConfig((config) => dynamoConnectionStore(tableClient(config), resourceName(config, "TABLE_NAME")));
export const profileStore = /* @__PURE__ */ perConfig((config) => dynamoProfileStore(tableClient(config), resourceName(config, "TABLE_NAME")));
export const poolStore = /* @__PURE__ */ perConfig((config) => dynamoPoolStore(tableClient(config), resourceName(config, "TABLE_NAME")));
export const apiKeyStore = /* @__PURE__ */ perConfig((config) => dynamoApiKeyStore(tableClient(config), resourceName(config, "TABLE_NAME")));
export const handoffStore = /* @__PURE__ */ perConfig((config) => dynamoHandoffStore(tableClient(config), resourceName(config, "TABLE_NAME")));
export const streamSlotStore = /* @__PURE__ */ perConfig((config) => dynamoStreamSlotStore(tableClient(config), resourceName(config, "TABLE_NAME")));
