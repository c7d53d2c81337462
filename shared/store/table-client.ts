import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { jsonServiceClient } from "../aws/json-protocol.ts";
import { backoffMs } from "../aws/signed-requests.ts";

/** An item or key as plain JavaScript values; marshalled to DynamoDB's attribute values on the way. */
export type Document = Record<string, unknown>;

interface Expressions {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Document;
}

type ReturnValues = "NONE" | "ALL_OLD" | "ALL_NEW" | "UPDATED_OLD" | "UPDATED_NEW";

export interface GetInput {
  TableName: string;
  Key: Document;
  ConsistentRead?: boolean;
}

export interface PutInput extends Expressions {
  TableName: string;
  Item: Document;
}

export interface UpdateInput extends Expressions {
  TableName: string;
  Key: Document;
  UpdateExpression: string;
  ReturnValues?: ReturnValues;
}

export interface DeleteInput extends Expressions {
  TableName: string;
  Key: Document;
  ReturnValues?: ReturnValues;
}

interface ReadInput extends Expressions {
  TableName: string;
  IndexName?: string;
  FilterExpression?: string;
  Limit?: number;
  ExclusiveStartKey?: Document;
  ConsistentRead?: boolean;
}

export interface QueryInput extends ReadInput {
  KeyConditionExpression: string;
  ScanIndexForward?: boolean;
}

export type ScanInput = ReadInput;

export type TransactWriteItem =
  | { Put: PutInput }
  | { Update: UpdateInput }
  | { Delete: DeleteInput }
  | { ConditionCheck: Expressions & { TableName: string; Key: Document; ConditionExpression: string } };

export type WriteRequest = { PutRequest: { Item: Document } } | { DeleteRequest: { Key: Document } };

export interface Page {
  Items: Document[];
  LastEvaluatedKey?: Document;
}

/**
 * The table calls the stores make, with the inputs and answers of the SDK's document client, over
 * DynamoDB's JSON protocol. The SDK client (about 200 KB in a bundle) costs each call about a
 * millisecond more CPU, measured against DynamoDB Local; every function calls the table.
 */
export interface TableClient {
  get(input: GetInput): Promise<{ Item?: Document }>;
  put(input: PutInput): Promise<void>;
  update(input: UpdateInput): Promise<{ Attributes?: Document }>;
  delete(input: DeleteInput): Promise<{ Attributes?: Document }>;
  query(input: QueryInput): Promise<Page>;
  scan(input: ScanInput): Promise<Page>;
  /** Up to 25 requests; those DynamoDB leaves unprocessed are sent again until none is left. */
  batchWrite(requestItems: Record<string, WriteRequest[]>): Promise<void>;
  transactWrite(items: TransactWriteItem[]): Promise<void>;
  destroy(): void;
}

export interface TableSettings {
  region: string;
  /** DynamoDB Local; unset in AWS. */
  endpoint?: string;
}

const maxBatchAttempts = 8;

const toAttributes = (document: Document) => marshall(document, { removeUndefinedValues: true });
const fromAttributes = (attributes: Record<string, never>) => unmarshall(attributes);

/** Marshals the document-valued fields an input may carry, leaving the rest as it is. */
function wire<T extends Partial<Record<"Key" | "Item" | "ExpressionAttributeValues" | "ExclusiveStartKey", Document>>>(input: T): object {
  const marshalled: Record<string, unknown> = { ...input };
  for (const field of ["Key", "Item", "ExpressionAttributeValues", "ExclusiveStartKey"] as const) {
    const value = input[field];
    if (value !== undefined) marshalled[field] = toAttributes(value);
  }
  return marshalled;
}

type WireAnswer = Partial<Record<"Item" | "Attributes" | "LastEvaluatedKey", Record<string, never>>> & { Items?: Record<string, never>[] };

const wireRequests = (requests: Record<string, WriteRequest[]>) =>
  Object.fromEntries(
    Object.entries(requests).map(([table, list]) => [
      table,
      list.map((request) => ("PutRequest" in request ? { PutRequest: wire(request.PutRequest) } : { DeleteRequest: wire(request.DeleteRequest) })),
    ]),
  );

export function createTableClient(settings: TableSettings): TableClient {
  const dynamodb = jsonServiceClient({
    service: "dynamodb",
    targetPrefix: "DynamoDB_20120810",
    jsonVersion: "1.0",
    region: settings.region,
    endpoint: settings.endpoint,
  });
  const call = (operation: string, input: object) => dynamodb.call<WireAnswer>(operation, input);
  const optional = (attributes: Record<string, never> | undefined) => (attributes ? fromAttributes(attributes) : undefined);
  const page = (answer: WireAnswer): Page => ({
    Items: (answer.Items ?? []).map(fromAttributes),
    ...(answer.LastEvaluatedKey ? { LastEvaluatedKey: fromAttributes(answer.LastEvaluatedKey) } : {}),
  });

  return {
    async get(input) {
      const answer = await call("GetItem", wire(input));
      return answer.Item ? { Item: fromAttributes(answer.Item) } : {};
    },
    async put(input) {
      await call("PutItem", wire(input));
    },
    async update(input) {
      return { Attributes: optional((await call("UpdateItem", wire(input))).Attributes) };
    },
    async delete(input) {
      return { Attributes: optional((await call("DeleteItem", wire(input))).Attributes) };
    },
    query: async (input) => page(await call("Query", wire(input))),
    scan: async (input) => page(await call("Scan", wire(input))),
    async batchWrite(requestItems) {
      let pending = wireRequests(requestItems);
      for (let attempt = 1; Object.keys(pending).length > 0; attempt++) {
        if (attempt > maxBatchAttempts) throw new Error(`DynamoDB left writes unprocessed after ${maxBatchAttempts} attempts`);
        if (attempt > 1) await sleep(backoffMs(attempt));
        pending = ((await call("BatchWriteItem", { RequestItems: pending })) as { UnprocessedItems?: typeof pending }).UnprocessedItems ?? {};
      }
    },
    async transactWrite(items) {
      const wired = items.map((item) => {
        const [kind, operation] = Object.entries(item)[0] as [string, Parameters<typeof wire>[0]];
        return { [kind]: wire(operation) };
      });
      // As the SDK does: a retry of a transaction that did commit is then answered as committed, not as a failed condition.
      await call("TransactWriteItems", { TransactItems: wired, ClientRequestToken: randomUUID() });
    },
    destroy: () => dynamodb.destroy(),
  };
}
