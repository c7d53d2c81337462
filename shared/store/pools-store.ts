import { DeleteCommand, GetCommand, paginateQuery, PutCommand, UpdateCommand, type DynamoDBDocumentClient, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { Pool, PoolChanges, PooledBrowser, PoolStore, PoolUpdateOutcome } from "../domain/pool.ts";
import { newestFirst, pauseAfterLostRace, transact, unlessConditionFails, withoutKeys } from "./dynamo.ts";
import { indexKeys, keys } from "./keys.ts";
import { tableDefinition } from "./table.ts";

/** A lost race costs one pass; losing this many in a row means something else is wrong. */
const maxPasses = 4;

const browserSortKeyPrefix = "BROWSER#";

/**
 * Pools and their browsers. The pool item and its browser items share the partition
 * `POOL#<org>#<id>`, so one consistent Query returns the pool with every browser, and the counts
 * the API shows are counted from the browser items themselves.
 */
export function dynamoPoolStore(db: DynamoDBDocumentClient, tableName: string): PoolStore {
  async function read(org: string, id: string) {
    const items = [];
    const pages = paginateQuery(
      { client: db },
      { TableName: tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": keys.pool(org, id).pk }, ConsistentRead: true },
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
    const poolItem = items.find((item) => item.sk === keys.pool(org, id).sk);
    if (!poolItem) return undefined;
    const browsers = items
      .filter((item) => (item.sk as string).startsWith(browserSortKeyPrefix))
      .map((item) => withoutKeys<PooledBrowser>(item))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.session_id.localeCompare(b.session_id));
    return { pool: withoutKeys<Pool>(poolItem), browsers };
  }

  async function findByName(org: string, name: string): Promise<string | undefined> {
    const guard = await db.send(new GetCommand({ TableName: tableName, Key: keys.poolName(org, name), ConsistentRead: true }));
    return guard.Item?.pool_id as string | undefined;
  }

  /** The SET clause for the changed settings, shared by a plain update and a rename. */
  function settingsUpdate(changes: PoolChanges, now: string) {
    const entries = Object.entries(changes).filter(([, value]) => value !== undefined);
    const names = Object.fromEntries(entries.map(([field], index) => [`#f${index}`, field]));
    const values = Object.fromEntries(entries.map(([, value], index) => [`:v${index}`, value]));
    const sets = entries.map((_, index) => `#f${index} = :v${index}`);
    return {
      UpdateExpression: `SET ${[...sets, "updated_at = :now"].join(", ")}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ...values, ":now": now },
    };
  }

  /** Runs a conditional update: the updated item, or undefined when its condition did not hold. */
  async function updateIf(input: UpdateCommandInput): Promise<Record<string, unknown> | undefined> {
    const result = await unlessConditionFails(db.send(new UpdateCommand({ ...input, ReturnValues: "ALL_NEW" })));
    return result && (result.Attributes ?? {});
  }

  /** Changes a browser's record only while `change.condition` holds: the changed record, or undefined. */
  async function changeBrowserIf(
    org: string,
    poolId: string,
    sessionId: string,
    change: { set: string; condition: string; values: Record<string, unknown> },
  ): Promise<PooledBrowser | undefined> {
    const changed = await updateIf({
      TableName: tableName,
      Key: keys.poolBrowser(org, poolId, sessionId),
      UpdateExpression: `SET ${change.set}`,
      ConditionExpression: change.condition,
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: change.values,
    });
    return changed && withoutKeys<PooledBrowser>(changed);
  }

  /** Deletes a browser's record only while `condition` holds; the record it deleted, or undefined. */
  async function removeBrowserIf(
    org: string,
    poolId: string,
    sessionId: string,
    condition: { expression: string; names: Record<string, string>; values: Record<string, unknown> },
  ): Promise<PooledBrowser | undefined> {
    const result = await unlessConditionFails(db.send(new DeleteCommand({
      TableName: tableName,
      Key: keys.poolBrowser(org, poolId, sessionId),
      ConditionExpression: condition.expression,
      ExpressionAttributeNames: condition.names,
      ExpressionAttributeValues: condition.values,
      ReturnValues: "ALL_OLD",
    })));
    return result?.Attributes ? withoutKeys<PooledBrowser>(result.Attributes) : undefined;
  }

  return {
    read,
    findByName,

    async insert(pool) {
      // Guard: the name item is put only if absent, together with the pool: one pool per name.
      const outcome = await transact(db, {
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: { ...keys.poolName(pool.org, pool.name), entity: "pool_name", pool_id: pool.id },
              ConditionExpression: "attribute_not_exists(pk)",
            },
          },
          {
            Put: {
              TableName: tableName,
              Item: {
                ...keys.pool(pool.org, pool.id),
                entity: "pool",
                gsi1pk: indexKeys.poolsOfOrg(pool.org),
                gsi1sk: indexKeys.createdOrder(pool.created_at, pool.id),
                // The profile index is free on pool items: it carries the filler's all-orgs list.
                gsi2pk: indexKeys.poolsOfAllOrgs(),
                gsi2sk: indexKeys.createdOrder(pool.created_at, pool.id),
                ...pool,
              },
              ConditionExpression: "attribute_not_exists(pk)",
            },
          },
        ],
      });
      return outcome.committed;
    },

    async list({ org, offset, limit }) {
      const found = await newestFirst<Pool>(db, tableName, { index: tableDefinition.indexes.byOrg }, indexKeys.poolsOfOrg(org), offset + limit + 1);
      return { items: found.slice(offset, offset + limit), hasMore: found.length > offset + limit };
    },

    listAll() {
      return newestFirst<Pool>(db, tableName, { index: tableDefinition.indexes.byProfile }, indexKeys.poolsOfAllOrgs(), Infinity);
    },

    async update(org, id, changes, now): Promise<PoolUpdateOutcome> {
      for (let pass = 1; pass <= maxPasses; pass++) {
        if (pass > 1) await pauseAfterLostRace(pass);
        const current = await read(org, id);
        if (!current) return { outcome: "missing" };
        const { pool } = current;
        const update = settingsUpdate(changes, now);
        const renaming = changes.name !== undefined && changes.name !== pool.name;
        // Guard: the pool must still carry the name read above; on a rename the old name item must
        // still point at it and the new one must not exist, all changed together.
        const outcome = await transact(db, {
          TransactItems: [
            {
              Update: {
                TableName: tableName,
                Key: keys.pool(org, id),
                ...update,
                ConditionExpression: "#name = :old",
                ExpressionAttributeNames: { ...update.ExpressionAttributeNames, "#name": "name" },
                ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ":old": pool.name },
              },
            },
            ...(renaming
              ? [
                  {
                    Delete: {
                      TableName: tableName,
                      Key: keys.poolName(org, pool.name),
                      ConditionExpression: "pool_id = :id",
                      ExpressionAttributeValues: { ":id": id },
                    },
                  },
                  {
                    Put: {
                      TableName: tableName,
                      Item: { ...keys.poolName(org, changes.name as string), entity: "pool_name", pool_id: id },
                      ConditionExpression: "attribute_not_exists(pk)",
                    },
                  },
                ]
              : []),
          ],
        });
        if (outcome.committed) return { outcome: "updated", pool: { ...pool, ...changes, updated_at: now } as Pool };
        if (renaming && outcome.reasons[2] === "ConditionalCheckFailed") return { outcome: "nameTaken" };
      }
      throw new Error(`browser pool '${id}' kept changing while it was being updated`);
    },

    async markDeleting(org, id, now) {
      const marked = await updateIf({
        TableName: tableName,
        Key: keys.pool(org, id),
        UpdateExpression: "SET deleting_since = :now",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":now": now },
      });
      return marked !== undefined;
    },

    async unmarkDeleting(org, id) {
      await updateIf({
        TableName: tableName,
        Key: keys.pool(org, id),
        UpdateExpression: "REMOVE deleting_since",
        ConditionExpression: "attribute_exists(pk)",
      });
    },

    async remove(org, id) {
      const current = await read(org, id);
      if (!current) return;
      await transact(db, {
        TransactItems: [
          { Delete: { TableName: tableName, Key: keys.pool(org, id) } },
          {
            Delete: {
              TableName: tableName,
              Key: keys.poolName(org, current.pool.name),
              ConditionExpression: "pool_id = :id",
              ExpressionAttributeValues: { ":id": id },
            },
          },
        ],
      });
    },

    async addBrowser(org, poolId, browser) {
      // Guard: the pool exists and no delete has begun, so a delete never misses a browser.
      const outcome = await transact(db, {
        TransactItems: [
          {
            ConditionCheck: {
              TableName: tableName,
              Key: keys.pool(org, poolId),
              ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(deleting_since)",
            },
          },
          {
            Put: {
              TableName: tableName,
              Item: { ...keys.poolBrowser(org, poolId, browser.session_id), entity: "pool_browser", ...browser },
              ConditionExpression: "attribute_not_exists(pk)",
            },
          },
        ],
      });
      return outcome.committed;
    },

    async getBrowser(org, poolId, sessionId) {
      const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.poolBrowser(org, poolId, sessionId), ConsistentRead: true }));
      return result.Item ? withoutKeys<PooledBrowser>(result.Item) : undefined;
    },

    // Guard: only an idle browser is leased, so two acquires never get the same one.
    lease: (org, poolId, sessionId, leasedAt, expiresAt) =>
      changeBrowserIf(org, poolId, sessionId, {
        set: "#state = :leased, leased_at = :at, lease_expires_at = :until",
        condition: "#state = :idle",
        values: { ":leased": "leased", ":idle": "idle", ":at": leasedAt, ":until": expiresAt },
      }),

    async returnToPool(org, poolId, sessionId, leasedAt) {
      // Guard: the same lease is still on, so a release cannot revive a lease the reclaimer ended.
      const returned = await changeBrowserIf(org, poolId, sessionId, {
        set: "#state = :idle, leased_at = :none, lease_expires_at = :none",
        condition: "#state = :leased AND leased_at = :at",
        values: { ":leased": "leased", ":idle": "idle", ":at": leasedAt, ":none": null },
      });
      return returned !== undefined;
    },

    // Guard of a flush: only an idle record is deleted, so a browser leased after the flush read
    // the pool keeps its record, and the flush destroys only browsers whose record it deleted.
    removeIdle: (org, poolId, sessionId) =>
      removeBrowserIf(org, poolId, sessionId, { expression: "#state = :idle", names: { "#state": "state" }, values: { ":idle": "idle" } }),

    removeLeased: (org, poolId, sessionId, leasedAt) =>
      removeBrowserIf(org, poolId, sessionId, {
        expression: "#state = :leased AND leased_at = :at",
        names: { "#state": "state" },
        values: { ":leased": "leased", ":at": leasedAt },
      }),

    removeRunning: (org, poolId, sessionId, ref) =>
      removeBrowserIf(org, poolId, sessionId, { expression: "#ref = :ref", names: { "#ref": "ref" }, values: { ":ref": ref } }),

    async claimFillerPass(holder, now, until) {
      const claimed = await unlessConditionFails(
        db.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...keys.fillerPass(), holder, until },
            ConditionExpression: "attribute_not_exists(pk) OR #until <= :now",
            ExpressionAttributeNames: { "#until": "until" },
            ExpressionAttributeValues: { ":now": now },
          }),
        ),
      );
      return claimed !== undefined;
    },

    async releaseFillerPass(holder) {
      await unlessConditionFails(
        db.send(new DeleteCommand({ TableName: tableName, Key: keys.fillerPass(), ConditionExpression: "holder = :holder", ExpressionAttributeValues: { ":holder": holder } })),
      );
    },
  };
}
