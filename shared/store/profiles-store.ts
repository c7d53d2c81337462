import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Page } from "../domain/list-page.ts";
import type { Profile, ProfileRef, ProfileStore, RemoveOutcome, RenameOutcome } from "../domain/profile.ts";
import { newestFirst, pauseAfterLostRace, transact, unlessConditionFails, withoutKeys } from "./dynamo.ts";
import { indexKeys, keys } from "./keys.ts";
import { tableDefinition } from "./table.ts";

/** A lost race costs one pass; losing this many in a row means something else is wrong. */
const maxPasses = 4;

/**
 * A new profile's writes: its name item, put only if absent (one profile per name), and the profile
 * itself, counting `connectionCount` connections written in the same transaction.
 */
export function newProfileItems(tableName: string, org: string, profile: Profile, connectionCount: number) {
  return [
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.profileName(org, profile.name), entity: "profile_name", profile_id: profile.id },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: {
          ...keys.profile(org, profile.id),
          entity: "profile",
          gsi1pk: indexKeys.profilesOfOrg(org),
          gsi1sk: indexKeys.createdOrder(profile.created_at, profile.id),
          ...profile,
          connection_count: connectionCount,
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
  ];
}

export function dynamoProfileStore(db: DynamoDBDocumentClient, tableName: string): ProfileStore {
  async function findByName(org: string, name: string): Promise<ProfileRef | undefined> {
    const guard = await db.send(new GetCommand({ TableName: tableName, Key: keys.profileName(org, name), ConsistentRead: true }));
    return guard.Item ? { id: guard.Item.profile_id as string, name } : undefined;
  }

  async function get(org: string, id: string): Promise<Profile | undefined> {
    const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.profile(org, id), ConsistentRead: true }));
    return result.Item ? withoutKeys<Profile>(result.Item) : undefined;
  }

  async function insert(org: string, profile: Profile): Promise<boolean> {
    // Guard: the name item is put only if absent, together with the profile: one profile per name.
    const outcome = await transact(db, { TransactItems: newProfileItems(tableName, org, profile, 0) });
    return outcome.committed;
  }

  return {
    findByName,
    get,
    insert,

    async list({ org, offset, limit, matches }): Promise<Page<Profile>> {
      const found = await newestFirst<Profile>(db, tableName, { index: tableDefinition.indexes.byOrg }, indexKeys.profilesOfOrg(org), offset + limit + 1, matches);
      return { items: found.slice(offset, offset + limit), hasMore: found.length > offset + limit };
    },

    async rename(org, id, name, now): Promise<RenameOutcome> {
      for (let pass = 1; pass <= maxPasses; pass++) {
        if (pass > 1) await pauseAfterLostRace(pass);
        const profile = await get(org, id);
        if (!profile) return { outcome: "missing" };
        if (profile.name === name) return { outcome: "renamed", profile };
        // Guard: the profile must still carry the name read above, the old name item must still
        // point at it, and the new name item must not exist; all three change together.
        const outcome = await transact(db, {
          TransactItems: [
            {
              Update: {
                TableName: tableName,
                Key: keys.profile(org, id),
                UpdateExpression: "SET #name = :new, updated_at = :now",
                ConditionExpression: "#name = :old",
                ExpressionAttributeNames: { "#name": "name" },
                ExpressionAttributeValues: { ":new": name, ":old": profile.name, ":now": now },
              },
            },
            {
              Delete: {
                TableName: tableName,
                Key: keys.profileName(org, profile.name),
                ConditionExpression: "profile_id = :id",
                ExpressionAttributeValues: { ":id": id },
              },
            },
            {
              Put: {
                TableName: tableName,
                Item: { ...keys.profileName(org, name), entity: "profile_name", profile_id: id },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
          ],
        });
        if (outcome.committed) return { outcome: "renamed", profile: { ...profile, name, updated_at: now } };
        if (outcome.reasons[2] === "ConditionalCheckFailed") return { outcome: "nameTaken" };
      }
      throw new Error(`profile '${id}' kept changing while it was being renamed`);
    },

    async remove(org, id): Promise<RemoveOutcome> {
      for (let pass = 1; pass <= maxPasses; pass++) {
        if (pass > 1) await pauseAfterLostRace(pass);
        const profile = await get(org, id);
        if (!profile) return { outcome: "missing" };
        if ((profile as Profile & { connection_count?: number }).connection_count) return { outcome: "inUse" };
        // Guard: deleted only while no connection counts it, so a connection created concurrently
        // either lands first (and this fails) or finds the profile gone and makes a new one.
        const outcome = await transact(db, {
          TransactItems: [
            {
              Delete: {
                TableName: tableName,
                Key: keys.profile(org, id),
                ConditionExpression: "connection_count = :zero AND #name = :name",
                ExpressionAttributeNames: { "#name": "name" },
                ExpressionAttributeValues: { ":zero": 0, ":name": profile.name },
              },
            },
            {
              Delete: {
                TableName: tableName,
                Key: keys.profileName(org, profile.name),
                ConditionExpression: "profile_id = :id",
                ExpressionAttributeValues: { ":id": id },
              },
            },
          ],
        });
        if (outcome.committed) return { outcome: "removed", profile };
      }
      throw new Error(`profile '${id}' kept changing while it was being deleted`);
    },

    async setArchive(org, id, archive, replacing) {
      const result = await unlessConditionFails(db.send(new UpdateCommand({
        TableName: tableName,
        Key: keys.profile(org, id),
        UpdateExpression: "SET #archive = :archive, updated_at = :now",
        // Guard: never resurrect a deleted profile as a partial item, nor replace an archive saved since the one `replacing` names.
        ConditionExpression: replacing === undefined ? "attribute_exists(pk)" : "attribute_exists(pk) AND #archive.saved_at = :replacing",
        ExpressionAttributeNames: { "#archive": "archive" },
        ExpressionAttributeValues: { ":archive": archive, ":now": archive.saved_at, ...(replacing === undefined ? {} : { ":replacing": replacing }) },
        ReturnValues: "ALL_NEW",
      })));
      return result?.Attributes ? withoutKeys<Profile>(result.Attributes) : undefined;
    },
  };
}
