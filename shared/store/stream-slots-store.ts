import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { StreamSlot, StreamSlotStore } from "../domain/connection-events.ts";
import { unlessConditionFails } from "./dynamo.ts";
import { keys } from "./keys.ts";
import { tableDefinition } from "./table.ts";

/** Streams last minutes; DynamoDB's TTL removes a connection's slots item a day after its last write. */
const itemLifetimeSeconds = 24 * 60 * 60;

const removedAfterADay = () => ({ [tableDefinition.timeToLiveAttribute]: Math.ceil(Date.now() / 1000) + itemLifetimeSeconds });

/**
 * The open event streams of each connection, as one item holding a map of slots and a version.
 * Every write bumps the version, and taking a slot writes the whole map only at the version it
 * read, so two streams opening at once cannot both take the last slot.
 */
export function dynamoStreamSlotStore(db: DynamoDBDocumentClient, tableName: string): StreamSlotStore {
  return {
    async read(org, connectionId) {
      const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: keys.streamSlots(org, connectionId), ConsistentRead: true }));
      return { slots: (Item?.slots as Record<string, StreamSlot> | undefined) ?? {}, version: (Item?.version as number | undefined) ?? 0 };
    },

    async replace(org, connectionId, slots, version) {
      const written = await unlessConditionFails(
        db.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...keys.streamSlots(org, connectionId), entity: "stream_slots", slots, version: version + 1, ...removedAfterADay() },
            // Guard: no other write since the read (version 0: the item did not exist).
            ConditionExpression: version === 0 ? "attribute_not_exists(pk)" : "version = :read",
            ...(version === 0 ? {} : { ExpressionAttributeValues: { ":read": version } }),
          }),
        ),
      );
      return written !== undefined;
    },

    async renew(org, connectionId, slotId, until) {
      const renewed = await unlessConditionFails(
        db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.streamSlots(org, connectionId),
            UpdateExpression: "SET slots.#slot.#until = :until, version = version + :one, #ttl = :ttl",
            // Guard: a slot dropped as lapsed is not brought back.
            ConditionExpression: "attribute_exists(slots.#slot)",
            ExpressionAttributeNames: { "#slot": slotId, "#until": "until", "#ttl": tableDefinition.timeToLiveAttribute },
            ExpressionAttributeValues: { ":until": until, ":one": 1, ":ttl": removedAfterADay()[tableDefinition.timeToLiveAttribute] },
          }),
        ),
      );
      return renewed !== undefined;
    },

    async release(org, connectionId, slotId) {
      await unlessConditionFails(
        db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.streamSlots(org, connectionId),
            UpdateExpression: "REMOVE slots.#slot SET version = version + :one",
            // Guard: an item gone (or a slot already dropped) is left as it is rather than made anew.
            ConditionExpression: "attribute_exists(slots.#slot)",
            ExpressionAttributeNames: { "#slot": slotId },
            ExpressionAttributeValues: { ":one": 1 },
          }),
        ),
      );
    },
  };
}
