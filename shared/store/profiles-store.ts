import { GetCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { ProfileRef, ProfileStore } from "../domain/profile.ts";
import { transact } from "./dynamo.ts";
import { indexKeys, keys } from "./keys.ts";

/** A lost race costs one pass; losing this many in a row means something else is wrong. */
const maxPasses = 4;

export function dynamoProfileStore(db: DynamoDBDocumentClient, tableName: string): ProfileStore {
  async function findByName(org: string, name: string): Promise<ProfileRef | undefined> {
    const guard = await db.send(new GetCommand({ TableName: tableName, Key: keys.profileName(org, name), ConsistentRead: true }));
    return guard.Item ? { id: guard.Item.profile_id as string, name } : undefined;
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
        if (outcome.committed) return { id: candidate.id, name: candidate.name };
      }
      throw new Error(`profile '${candidate.name}' kept changing while it was being created`);
    },
  };
}
