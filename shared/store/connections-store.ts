import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Connection, ConnectionListScope, ConnectionStore, InsertOutcome, Page } from "../domain/connection.ts";
import { isConditionFailure, newestFirst, transact, withoutKeys } from "./dynamo.ts";
import { indexKeys, keys } from "./keys.ts";
import { tableDefinition } from "./table.ts";

export function dynamoConnectionStore(db: DynamoDBDocumentClient, tableName: string): ConnectionStore {
  function toItem(connection: Connection) {
    const order = indexKeys.createdOrder(connection.created_at, connection.id);
    return {
      ...keys.connection(connection.org, connection.id),
      entity: "connection",
      gsi1pk: indexKeys.connectionsOfOrg(connection.org),
      gsi1sk: order,
      gsi2pk: indexKeys.connectionsOfProfile(connection.org, connection.profile_id),
      gsi2sk: order,
      gsi3pk: indexKeys.connectionsOfDomain(connection.org, connection.domain),
      gsi3sk: order,
      ...connection,
    };
  }

  async function get(org: string, id: string): Promise<Connection | undefined> {
    const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.connection(org, id), ConsistentRead: true }));
    return result.Item ? withoutKeys<Connection>(result.Item) : undefined;
  }

  async function readGuard(org: string, profileId: string, domain: string): Promise<string | undefined> {
    const result = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.connectionGuard(org, profileId, domain), ConsistentRead: true }),
    );
    return result.Item?.connection_id as string | undefined;
  }

  async function scoped(scope: ConnectionListScope, org: string, wanted: number, matches?: (c: Connection) => boolean) {
    const { byOrg, byProfile, byDomain } = tableDefinition.indexes;
    switch (scope.kind) {
      case "org":
        return newestFirst<Connection>(db, tableName, byOrg, indexKeys.connectionsOfOrg(org), wanted, matches);
      case "profile":
        return newestFirst<Connection>(db, tableName, byProfile, indexKeys.connectionsOfProfile(org, scope.profileId), wanted, matches);
      case "domain":
        return newestFirst<Connection>(db, tableName, byDomain, indexKeys.connectionsOfDomain(org, scope.domain), wanted, matches);
      case "profileAndDomain": {
        const id = await readGuard(org, scope.profileId, scope.domain);
        const connection = id ? await get(org, id) : undefined;
        return connection && (!matches || matches(connection)) ? [connection] : [];
      }
    }
  }

  async function insert(connection: Connection): Promise<InsertOutcome> {
    // Guard: the (org, profile id, domain) item is put only if absent, in the same transaction as
    // the connection, and the profile must still exist; so at most one connection per pair.
    const outcome = await transact(db, {
      TransactItems: [
        { Put: { TableName: tableName, Item: toItem(connection), ConditionExpression: "attribute_not_exists(pk)" } },
        {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.connectionGuard(connection.org, connection.profile_id, connection.domain),
              entity: "connection_guard",
              connection_id: connection.id,
            },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        {
          Update: {
            TableName: tableName,
            Key: keys.profile(connection.org, connection.profile_id),
            UpdateExpression: "ADD connection_count :one",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: { ":one": 1 },
          },
        },
      ],
    });
    if (outcome.committed) return { outcome: "created" };
    const [, guardReason, profileReason] = outcome.reasons;
    if (guardReason === "ConditionalCheckFailed") {
      const existingId = await readGuard(connection.org, connection.profile_id, connection.domain);
      // A guard that vanished between the failure and this read was deleted: the pair is free again.
      return existingId ? { outcome: "duplicate", existingId } : insert(connection);
    }
    if (profileReason === "ConditionalCheckFailed") return { outcome: "profileGone" };
    throw new Error(`connection insert cancelled: ${outcome.reasons.join(", ")}`);
  }

  return {
    get,

    insert,

    async list({ org, scope, offset, limit, matches }): Promise<Page<Connection>> {
      const found = await scoped(scope, org, offset + limit + 1, matches);
      return { items: found.slice(offset, offset + limit), hasMore: found.length > offset + limit };
    },

    async updateSettings(org, id, changes, now) {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = { ":now": now, ":one": 1 };
      const assignments = Object.entries(changes).map(([field, value], index) => {
        names[`#f${index}`] = field;
        values[`:v${index}`] = value;
        return `#f${index} = :v${index}`;
      });
      try {
        const result = await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.connection(org, id),
            UpdateExpression: `SET ${assignments.join(", ")}, updated_at = :now ADD version :one`,
            // Guard: never resurrect a deleted connection as a partial item.
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: "ALL_NEW",
          }),
        );
        return result.Attributes ? withoutKeys<Connection>(result.Attributes) : undefined;
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
    },

    async renameProfile(org, profileId, name) {
      const partition = indexKeys.connectionsOfProfile(org, profileId);
      const connections = await newestFirst<Connection>(db, tableName, tableDefinition.indexes.byProfile, partition, Infinity);
      for (const connection of connections) {
        try {
          await db.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.connection(org, connection.id),
              UpdateExpression: "SET profile_name = :name",
              // Guard: a connection deleted meanwhile stays deleted.
              ConditionExpression: "attribute_exists(pk)",
              ExpressionAttributeValues: { ":name": name },
            }),
          );
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
        }
      }
    },

    async remove(org, id) {
      const connection = await get(org, id);
      if (!connection) return undefined;
      // Guard: the connection must still exist and the guard must still point at it, so two
      // concurrent deletes decrement the profile's count once.
      const outcome = await transact(db, {
        TransactItems: [
          { Delete: { TableName: tableName, Key: keys.connection(org, id), ConditionExpression: "attribute_exists(pk)" } },
          {
            Delete: {
              TableName: tableName,
              Key: keys.connectionGuard(org, connection.profile_id, connection.domain),
              ConditionExpression: "connection_id = :id",
              ExpressionAttributeValues: { ":id": id },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: keys.profile(org, connection.profile_id),
              UpdateExpression: "ADD connection_count :minusOne",
              ExpressionAttributeValues: { ":minusOne": -1 },
            },
          },
        ],
      });
      return outcome.committed ? connection : undefined;
    },
  };
}
