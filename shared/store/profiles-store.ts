import { GetCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Profile, ProfileStore } from "../domain/profile.ts";
import { transact, withoutKeys } from "./dynamo.ts";
import { indexKeys, keys } from "./keys.ts";

/** A lost race costs one pass; a guard that still points nowhere after these is corruption. */
const maxPasses = 4;

export function dynamoProfileStore(db: DynamoDBDocumentClient, tableName: string): ProfileStore {
  async function findByName(org: string, name: string): Promise<Profile | undefined> {
    const guard = await db.send(new GetCommand({ TableName: tableName, Key: keys.profileName(org, name), ConsistentRead: true }));
    if (!guard.Item) return undefined;
    const profile = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.profile(org, guard.Item.profile_id as string), ConsistentRead: true }),
    );
    return profile.Item ? withoutKeys<Profile>(profile.Item) : undefined;
  }

  return {
    findByName,

    async getOrCreateByName(org, candidate) {
      for (let pass = 1; pass <= maxPasses; pass++) {
        const existing = await findByName(org, candidate.name);
        if (existing) return existing;
        // Guard: the name item is put only if absent, so of two concurrent creators one wins and
        // the other reads the winner on its next pass.
        const outcome = await transact(db, {
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: { ...keys.profileName(org, candidate.name), entity: "profile_name", profile_id: candidate.id },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
            {
              Put: {
                TableName: tableName,
                Item: {
                  ...keys.profile(org, candidate.id),
                  entity: "profile",
                  gsi1pk: indexKeys.profilesOfOrg(org),
                  gsi1sk: indexKeys.createdOrder(candidate.created_at, candidate.id),
                  ...candidate,
                  connection_count: 0,
                },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
          ],
        });
        if (outcome.committed) return candidate;
      }
      throw new Error(`profile name guard for '${candidate.name}' points at no profile`);
    },
  };
}
