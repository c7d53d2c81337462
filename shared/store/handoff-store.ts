import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { HandoffCodeRecord, HandoffStore } from "../domain/handoff.ts";
import { unlessConditionFails } from "./dynamo.ts";
import { keys } from "./keys.ts";
import { tableDefinition } from "./table.ts";

export function dynamoHandoffStore(db: DynamoDBDocumentClient, tableName: string): HandoffStore {
  return {
    async putCode(record) {
      const item = {
        ...keys.handoffCode(record.code_hash),
        entity: "handoff_code",
        ...record,
        // DynamoDB's TTL removes the item some time after expiry; the redeem condition is what refuses it on time.
        [tableDefinition.timeToLiveAttribute]: Math.ceil(Date.parse(record.code_expires_at) / 1000),
      };
      await db.send(new PutCommand({ TableName: tableName, Item: item }));
    },

    async redeemCode(codeHash, connectionId, now) {
      const result = await unlessConditionFails(db.send(new DeleteCommand({
        TableName: tableName,
        Key: keys.handoffCode(codeHash),
        // Guard: only an unspent, unexpired code of this connection is deleted, and a delete
        // returns the item only to the one caller whose delete removed it.
        ConditionExpression: "attribute_exists(pk) AND connection_id = :connection AND code_expires_at > :now",
        ExpressionAttributeValues: { ":connection": connectionId, ":now": now },
        ReturnValues: "ALL_OLD",
      })));
      const item = result?.Attributes as (HandoffCodeRecord & Record<string, unknown>) | undefined;
      return item && { code_hash: item.code_hash, org: item.org, connection_id: item.connection_id, code_expires_at: item.code_expires_at };
    },

    async readSigningKey(name) {
      const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.signingKey(name), ConsistentRead: true }));
      return result.Item?.sealed_key as string | undefined;
    },

    async putSigningKeyIfAbsent(name, sealed) {
      const stored = await unlessConditionFails(db.send(new PutCommand({
        TableName: tableName,
        Item: { ...keys.signingKey(name), entity: "signing_key", sealed_key: sealed, created_at: new Date().toISOString() },
        // Guard: the first key stored stays; every token signed since depends on it.
        ConditionExpression: "attribute_not_exists(pk)",
      })));
      return stored !== undefined;
    },
  };
}
