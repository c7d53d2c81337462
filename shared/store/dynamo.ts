import { ConditionalCheckFailedException, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  BatchWriteCommand,
  paginateQuery,
  TransactWriteCommand,
  type BatchWriteCommandInput,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { setTimeout as sleep } from "node:timers/promises";
import { ServiceUnavailableError } from "../domain/errors.ts";

/** Why each item of a cancelled transaction failed, in request order ("None" where it did not). */
export type CancellationCodes = string[];

export type TransactOutcome = { committed: true } | { committed: false; reasons: CancellationCodes };

const maxConflictRetries = 12;

/**
 * Reasons DynamoDB cancels a transaction for that a later try may not meet: a concurrent
 * transaction on the same items, or throttling, which DynamoDB reports inside the cancellation
 * (a 400 the SDK does not retry) rather than as a throttling error.
 */
const passingReasons = new Set(["TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"]);

/**
 * Runs a transaction; a condition failure is an expected outcome returned to the caller, while a
 * conflict or throttling is retried with jittered backoff. Any other cancellation (a validation
 * error, an item too large) is the caller's bug and is thrown as it is.
 */
export async function transact(db: DynamoDBDocumentClient, input: TransactWriteCommandInput): Promise<TransactOutcome> {
  for (let attempt = 0; ; attempt++) {
    try {
      // The SDK gives each transaction a ClientRequestToken, so its own retry of one that did commit is answered as committed.
      await db.send(new TransactWriteCommand(input));
      return { committed: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? "None");
      if (reasons.includes("ConditionalCheckFailed")) return { committed: false, reasons };
      if (!reasons.some((code) => passingReasons.has(code))) throw error;
      if (attempt >= maxConflictRetries) {
        throw new ServiceUnavailableError("too many concurrent changes to the same resource, or the table is throttling; retry the request", { cause: error });
      }
      await pauseAfterLostRace(attempt);
    }
  }
}

/**
 * A jittered pause that grows with each lost race (a conflicting transaction, or a read-then-write
 * pass whose condition failed), so writers that collided spread out instead of colliding again.
 */
export function pauseAfterLostRace(attempt: number): Promise<void> {
  return sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
}

/** A single write's condition did not hold: an expected outcome, which the caller maps. */
function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException;
}

/** A guarded write's answer, or undefined when its condition did not hold. */
export async function unlessConditionFails<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

const maxBatchAttempts = 8;

/** Unprocessed writes are throttled ones: the pause before sending them again grows to a few seconds. */
const unprocessedBackoffMs = (attempt: number) => Math.random() * Math.min(3000, 50 * 2 ** attempt);

/** Up to 25 requests; the SDK does not resend those DynamoDB leaves unprocessed, so this does, until none is left. */
export async function writeBatch(db: DynamoDBDocumentClient, requestItems: NonNullable<BatchWriteCommandInput["RequestItems"]>): Promise<void> {
  let pending = requestItems;
  for (let attempt = 1; Object.keys(pending).length > 0; attempt++) {
    if (attempt > maxBatchAttempts) throw new ServiceUnavailableError(`DynamoDB left writes unprocessed after ${maxBatchAttempts} attempts; retry the request`);
    if (attempt > 1) await sleep(unprocessedBackoffMs(attempt));
    pending = (await db.send(new BatchWriteCommand({ RequestItems: pending }))).UnprocessedItems ?? {};
  }
}

const keyAttributes = new Set(["pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk", "entity"]);

/**
 * Drops the key and index attributes so only the entity's own fields remain. A loop rather than a
 * rest destructuring: on the dictionary-mode objects unmarshalling builds it is several times as
 * fast (docs/performance.md), and every read goes through here.
 */
export function withoutKeys<T>(item: Record<string, unknown>): T {
  const fields: Record<string, unknown> = {};
  for (const name of Object.keys(item)) if (!keyAttributes.has(name)) fields[name] = item[name];
  return fields as T;
}

/** Items read per query page when a predicate may reject most of them. */
const filteredPageSize = 200;
const maxPageSize = 1000;

/** Where a newest-first read looks: a list index, or the table itself under a sort-key prefix. */
export type NewestFirstSource =
  | { index: { name: string; partitionKey: string } }
  | { sortKeyPrefix: string };

/**
 * Reads a partition newest first (list sort keys are `<created_at>#<id>`, timeline sort keys
 * `EVENT#<time>#<id>`) until `wanted` items have passed `matches`, or the partition ends
 * (`wanted` may be Infinity).
 */
export async function newestFirst<T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  source: NewestFirstSource,
  partition: string,
  wanted: number,
  matches?: (item: T) => boolean,
): Promise<T[]> {
  const keyCondition =
    "index" in source
      ? { IndexName: source.index.name, KeyConditionExpression: "#pk = :pk", ExpressionAttributeNames: { "#pk": source.index.partitionKey }, ExpressionAttributeValues: { ":pk": partition } }
      : {
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
          ExpressionAttributeValues: { ":pk": partition, ":prefix": source.sortKeyPrefix },
        };
  const found: T[] = [];
  const pages = paginateQuery(
    { client: db, pageSize: matches ? filteredPageSize : Math.min(wanted, maxPageSize) },
    { TableName: tableName, ...keyCondition, ScanIndexForward: false },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const entity = withoutKeys<T>(item);
      if (!matches || matches(entity)) found.push(entity);
    }
    if (found.length >= wanted) break;
  }
  return found.slice(0, wanted);
}
