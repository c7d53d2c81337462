import { GetCommand, paginateScan, UpdateCommand, type DynamoDBDocumentClient, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type {
  Connection,
  ConnectionListScope,
  ConnectionStore,
  InsertOutcome,
  RecordGuard,
  TimelineEvent,
  TimelineRecord,
} from "../domain/connection.ts";
import type { Page } from "../domain/list-page.ts";
import { inProgress } from "../domain/flows/state.ts";
import type { Profile } from "../domain/profile.ts";
import { newestFirst, transact, unlessConditionFails, withoutKeys, writeBatch } from "./dynamo.ts";
import { indexKeys, keys, timelinePrefix } from "./keys.ts";
import { newProfileItems } from "./profiles-store.ts";
import { tableDefinition } from "./table.ts";

/** The stored item: the connection with its keys and the keys of the three list indexes. */
export function connectionItem(connection: Connection) {
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

/**
 * The create, as one transaction: the connection, its (org, profile id, domain) guard put only if
 * absent, and its profile: a new one put with its name item only if the name is free, or the
 * existing one's connection count, which requires the profile to still exist. So a create happens
 * whole or not at all, with at most one connection per pair, none for a profile deleted meanwhile,
 * and one profile per name. The profile's items come third (and fourth): a failed third item is a
 * lost race on the profile.
 */
export function insertConnectionItems(tableName: string, connection: Connection, newProfile?: Profile) {
  const profileItems = newProfile
    ? newProfileItems(tableName, connection.org, newProfile, 1)
    : [
        {
          Update: {
            TableName: tableName,
            Key: keys.profile(connection.org, connection.profile_id),
            UpdateExpression: "ADD connection_count :one",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: { ":one": 1 },
          },
        },
      ];
  return [
    { Put: { TableName: tableName, Item: connectionItem(connection), ConditionExpression: "attribute_not_exists(pk)" } },
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
    ...profileItems,
  ];
}

/** Clears the mark a create left (`workflow_start_pending`) once the first execution started. */
export function markWorkflowStartedUpdate(tableName: string, org: string, id: string, executionArn: string) {
  return {
    TableName: tableName,
    Key: keys.connection(org, id),
    UpdateExpression: "REMOVE workflow_start_pending",
    // Guard: only while the record still names the execution that started, and never on a deleted record.
    ConditionExpression: "attribute_exists(pk) AND execution_arn = :arn",
    ExpressionAttributeValues: { ":arn": executionArn },
  };
}

/**
 * An update that sets every field given (and bumps the version every change of the record makes),
 * only while `condition` holds.
 */
function recordUpdate(
  tableName: string,
  key: { pk: string; sk: string },
  changes: Record<string, unknown>,
  now: string,
  condition: { expression: string; values?: Record<string, unknown> },
) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ":now": now, ":one": 1, ...condition.values };
  const assignments = Object.entries(changes).map(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:v${index}`] = value;
    return `#f${index} = :v${index}`;
  });
  return {
    TableName: tableName,
    Key: key,
    UpdateExpression: `SET ${[...assignments, "updated_at = :now"].join(", ")} ADD version :one`,
    ConditionExpression: condition.expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

function guardCondition(guard: RecordGuard) {
  if ("executionArn" in guard) {
    return { expression: "attribute_exists(pk) AND execution_arn = :guardArn", values: { ":guardArn": guard.executionArn } as Record<string, unknown> };
  }
  if ("rejectedCredential" in guard) {
    return { expression: "attribute_exists(pk) AND reauth_rejected_credential.credential_id = :guardCredential", values: { ":guardCredential": guard.rejectedCredential } };
  }
  if ("sealedEvidence" in guard) {
    return { expression: "attribute_exists(pk) AND session_evidence_sealed = :guardEvidence", values: { ":guardEvidence": guard.sealedEvidence } };
  }
  const values: Record<string, unknown> = { ":guardFlow": guard.flowId, ":inProgress": inProgress };
  let expression = "attribute_exists(pk) AND flow_id = :guardFlow AND flow_status = :inProgress";
  if (guard.step) {
    expression += " AND flow_step = :guardStep";
    values[":guardStep"] = guard.step;
  }
  return { expression, values };
}

function timelineItem(org: string, id: string, record: TimelineRecord) {
  return { ...keys.timelineEvent(org, id, record.event.timestamp, record.event.id), entity: "timeline_event", ...record.event, expires_at: record.expiresAt };
}

export function dynamoConnectionStore(db: DynamoDBDocumentClient, tableName: string): ConnectionStore {
  async function get(org: string, id: string): Promise<Connection | undefined> {
    const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.connection(org, id), ConsistentRead: true }));
    return result.Item ? withoutKeys<Connection>(result.Item) : undefined;
  }

  /** False when the update's condition did not hold. */
  async function updateIfGuarded(update: UpdateCommandInput): Promise<boolean> {
    return (await unlessConditionFails(db.send(new UpdateCommand(update)))) !== undefined;
  }

  /** The record after the update, or undefined when the update's condition did not hold. */
  async function updateReturningRecord(update: ReturnType<typeof recordUpdate>): Promise<Connection | undefined> {
    const result = await unlessConditionFails(db.send(new UpdateCommand({ ...update, ReturnValues: "ALL_NEW" })));
    return result?.Attributes ? withoutKeys<Connection>(result.Attributes) : undefined;
  }

  async function readGuard(org: string, profileId: string, domain: string): Promise<string | undefined> {
    const result = await db.send(new GetCommand({ TableName: tableName, Key: keys.connectionGuard(org, profileId, domain), ConsistentRead: true }));
    return result.Item?.connection_id as string | undefined;
  }

  async function scoped(scope: ConnectionListScope, org: string, wanted: number, matches?: (c: Connection) => boolean) {
    const { byOrg, byProfile, byDomain } = tableDefinition.indexes;
    switch (scope.kind) {
      case "org":
        return newestFirst<Connection>(db, tableName, { index: byOrg }, indexKeys.connectionsOfOrg(org), wanted, matches);
      case "profile":
        return newestFirst<Connection>(db, tableName, { index: byProfile }, indexKeys.connectionsOfProfile(org, scope.profileId), wanted, matches);
      case "domain":
        return newestFirst<Connection>(db, tableName, { index: byDomain }, indexKeys.connectionsOfDomain(org, scope.domain), wanted, matches);
      case "profileAndDomain": {
        const id = await readGuard(org, scope.profileId, scope.domain);
        const connection = id ? await get(org, id) : undefined;
        return connection && (!matches || matches(connection)) ? [connection] : [];
      }
    }
  }

  async function insert(connection: Connection, newProfile?: Profile): Promise<InsertOutcome> {
    const outcome = await transact(db, {
      TransactItems: insertConnectionItems(tableName, connection, newProfile),
    });
    if (outcome.committed) return { outcome: "created" };
    const [, guardReason, profileReason] = outcome.reasons;
    if (guardReason === "ConditionalCheckFailed") {
      const existingId = await readGuard(connection.org, connection.profile_id, connection.domain);
      // A guard that vanished between the failure and this read was deleted: the pair is free
      // again, and the caller's next pass (bounded) tries once more.
      return existingId ? { outcome: "duplicate", existingId } : { outcome: "raced" };
    }
    if (profileReason === "ConditionalCheckFailed") return { outcome: "raced" };
    throw new Error(`connection insert cancelled: ${outcome.reasons.join(", ")}`);
  }

  /** Timeline events would expire by TTL anyway; deleting them keeps a deleted connection's data gone now. */
  async function removeTimeline(org: string, id: string): Promise<void> {
    const events = await newestFirst<TimelineEvent>(db, tableName, { sortKeyPrefix: timelinePrefix }, keys.connection(org, id).pk, Infinity);
    const requests = events.map((event) => ({ DeleteRequest: { Key: keys.timelineEvent(org, id, event.timestamp, event.id) } }));
    for (let start = 0; start < requests.length; start += 25) {
      await writeBatch(db, { [tableName]: requests.slice(start, start + 25) });
    }
  }

  return {
    get,

    insert,

    async markWorkflowStarted(org, id, executionArn) {
      return updateIfGuarded(markWorkflowStartedUpdate(tableName, org, id, executionArn));
    },

    async list({ org, scope, offset, limit, matches }): Promise<Page<Connection>> {
      const found = await scoped(scope, org, offset + limit + 1, matches);
      return { items: found.slice(offset, offset + limit), hasMore: found.length > offset + limit };
    },

    async updateSettings(org, id, changes, now) {
      // Guard: never resurrect a deleted connection as a partial item.
      return updateReturningRecord(recordUpdate(tableName, keys.connection(org, id), changes, now, { expression: "attribute_exists(pk)" }));
    },

    async renameProfile(org, profileId, name) {
      const partition = indexKeys.connectionsOfProfile(org, profileId);
      const connections = await newestFirst<Connection>(db, tableName, { index: tableDefinition.indexes.byProfile }, partition, Infinity);
      for (const connection of connections) {
        await updateIfGuarded({
          TableName: tableName,
          Key: keys.connection(org, connection.id),
          UpdateExpression: "SET profile_name = :name",
          // Guard: a connection deleted meanwhile stays deleted.
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":name": name },
        });
      }
    },

    async swapExecution(org, id, expectedArn, next) {
      return updateIfGuarded({
        TableName: tableName,
        Key: keys.connection(org, id),
        // The new execution runs, so a record a create left without one has its workflow now.
        UpdateExpression: "SET execution_arn = :next, workflow_generation = :generation REMOVE workflow_start_pending",
        // Guard: only the execution the record points at may hand over, and never to a deleted record.
        ConditionExpression: "attribute_exists(pk) AND execution_arn = :expected",
        ExpressionAttributeValues: { ":next": next.arn, ":generation": next.generation, ":expected": expectedArn },
      });
    },

    async beginFlow(org, id, flow, now) {
      const started = await updateReturningRecord(
        recordUpdate(tableName, keys.connection(org, id), flow, now, {
          // Guard: one live flow per connection, so concurrent logins start one flow and share it.
          expression: "attribute_exists(pk) AND (flow_status <> :inProgress OR attribute_type(flow_status, :null) OR flow_expires_at < :now)",
          values: { ":inProgress": inProgress, ":null": "NULL" },
        }),
      );
      if (started) return { started: true, connection: started };
      const connection = await get(org, id);
      return connection && { started: false, connection };
    },

    async guardedUpdate(org, id, guard, changes) {
      return updateReturningRecord(recordUpdate(tableName, keys.connection(org, id), changes, new Date().toISOString(), guardCondition(guard)));
    },

    async recordOutcome(org, id, guard, changes, timeline) {
      const update = recordUpdate(tableName, keys.connection(org, id), changes, new Date().toISOString(), guardCondition(guard));
      const outcome = await transact(db, { TransactItems: [{ Update: update }, { Put: { TableName: tableName, Item: timelineItem(org, id, timeline) } }] });
      return outcome.committed;
    },

    async timeline({ org, id, offset, limit, matches }) {
      const found = await newestFirst<TimelineEvent & { expires_at?: number }>(
        db,
        tableName,
        { sortKeyPrefix: timelinePrefix },
        keys.connection(org, id).pk,
        offset + limit + 1,
        matches,
      );
      const items = found.slice(offset, offset + limit).map(({ expires_at, ...event }) => event);
      return { items, hasMore: found.length > offset + limit };
    },

    async remove(org, id, executionArn) {
      const connection = await get(org, id);
      if (!connection) return "gone";
      // Guard: the connection must still exist and point at the execution the caller stopped, and
      // the guard must still point at it, so two concurrent deletes decrement the count once.
      const outcome = await transact(db, {
        TransactItems: [
          {
            Delete: {
              TableName: tableName,
              Key: keys.connection(org, id),
              ConditionExpression: "attribute_exists(pk) AND execution_arn = :arn",
              ExpressionAttributeValues: { ":arn": executionArn },
            },
          },
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
      if (!outcome.committed) return (await get(org, id)) ? "moved" : "gone";
      await removeTimeline(org, id);
      return "removed";
    },
  };
}

/** Every connection in the table, for the local runtime's restart; never used on a request path. */
export async function scanConnections(db: DynamoDBDocumentClient, tableName: string): Promise<Connection[]> {
  const connections: Connection[] = [];
  const pages = paginateScan(
    { client: db },
    { TableName: tableName, FilterExpression: "entity = :connection", ExpressionAttributeValues: { ":connection": "connection" } },
  );
  for await (const page of pages) connections.push(...(page.Items ?? []).map((item) => withoutKeys<Connection>(item)));
  return connections;
}
