import { GetCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Credential, CredentialStore, CredentialUpdateOutcome } from "../domain/credential.ts";
import { ServiceUnavailableError } from "../domain/errors.ts";
import { newestFirst, pauseAfterLostRace, transact, withoutKeys } from "./dynamo.ts";
import { indexKeys, keys } from "./keys.ts";
import { tableDefinition } from "./table.ts";

/** A lost race costs one pass; concurrent merges into one credential each win one in turn. */
const maxPasses = 8;

/** The stored item: the credential with its keys, listed per org (gsi1) and per domain (gsi3). */
function credentialItem(org: string, credential: Credential) {
  const order = indexKeys.createdOrder(credential.created_at, credential.id);
  return {
    ...keys.credential(org, credential.id),
    entity: "credential",
    gsi1pk: indexKeys.credentialsOfOrg(org),
    gsi1sk: order,
    gsi3pk: indexKeys.credentialsOfDomain(org, credential.domain),
    gsi3sk: order,
    ...credential,
  };
}

const nameItem = (org: string, name: string, id: string) => ({ ...keys.credentialName(org, name), entity: "credential_name", credential_id: id });

function tooBusy(id: string): never {
  throw new ServiceUnavailableError(`credential '${id}' kept changing while it was being written; retry the request`);
}

export function dynamoCredentialStore(db: DynamoDBDocumentClient, tableName: string): CredentialStore {
  async function get(org: string, id: string): Promise<Credential | undefined> {
    const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.credential(org, id), ConsistentRead: true }));
    return result.Item ? withoutKeys<Credential>(result.Item) : undefined;
  }

  return {
    get,

    async findByName(org, name) {
      const guard = await db.send(new GetCommand({ TableName: tableName, Key: keys.credentialName(org, name), ConsistentRead: true }));
      return guard.Item?.credential_id as string | undefined;
    },

    async insert(org, credential) {
      // Guard: the name item is put only if absent, together with the credential: one credential per name.
      const outcome = await transact(db, {
        TransactItems: [
          { Put: { TableName: tableName, Item: nameItem(org, credential.name, credential.id), ConditionExpression: "attribute_not_exists(pk)" } },
          { Put: { TableName: tableName, Item: credentialItem(org, credential), ConditionExpression: "attribute_not_exists(pk)" } },
        ],
      });
      return outcome.committed;
    },

    async list({ org, domain, offset, limit, matches }) {
      const { byOrg, byDomain } = tableDefinition.indexes;
      const [index, partition] = domain === undefined ? [byOrg, indexKeys.credentialsOfOrg(org)] : [byDomain, indexKeys.credentialsOfDomain(org, domain)];
      const found = await newestFirst<Credential>(db, tableName, { index }, partition, offset + limit + 1, matches);
      return { items: found.slice(offset, offset + limit), hasMore: found.length > offset + limit };
    },

    async update(org, id, change): Promise<CredentialUpdateOutcome> {
      for (let pass = 1; pass <= maxPasses; pass++) {
        if (pass > 1) await pauseAfterLostRace(pass);
        const current = await get(org, id);
        if (!current) return { outcome: "missing" };
        const next: Credential = { ...(await change(current)), version: current.version + 1 };
        const renaming = next.name !== current.name;
        // Guard: the credential is still the version read above (a deleted one fails too, so it is
        // never resurrected); on a rename the old name item must still point at it and the new one
        // must not exist, all changed together.
        const outcome = await transact(db, {
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: credentialItem(org, next),
                ConditionExpression: "version = :read",
                ExpressionAttributeValues: { ":read": current.version },
              },
            },
            ...(renaming
              ? [
                  {
                    Delete: {
                      TableName: tableName,
                      Key: keys.credentialName(org, current.name),
                      ConditionExpression: "credential_id = :id",
                      ExpressionAttributeValues: { ":id": id },
                    },
                  },
                  { Put: { TableName: tableName, Item: nameItem(org, next.name, id), ConditionExpression: "attribute_not_exists(pk)" } },
                ]
              : []),
          ],
        });
        if (outcome.committed) return { outcome: "updated", credential: next };
        if (renaming && outcome.reasons[2] === "ConditionalCheckFailed") return { outcome: "nameTaken" };
      }
      return tooBusy(id);
    },

    async remove(org, id) {
      for (let pass = 1; pass <= maxPasses; pass++) {
        if (pass > 1) await pauseAfterLostRace(pass);
        const current = await get(org, id);
        if (!current) return undefined;
        // Guard: deleted as read, with the name item that still points at it.
        const outcome = await transact(db, {
          TransactItems: [
            {
              Delete: {
                TableName: tableName,
                Key: keys.credential(org, id),
                ConditionExpression: "version = :read",
                ExpressionAttributeValues: { ":read": current.version },
              },
            },
            {
              Delete: {
                TableName: tableName,
                Key: keys.credentialName(org, current.name),
                ConditionExpression: "credential_id = :id",
                ExpressionAttributeValues: { ":id": id },
              },
            },
          ],
        });
        if (outcome.committed) return current;
      }
      return tooBusy(id);
    },
  };
}
