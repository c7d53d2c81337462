import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { transact } from "#shared/store/dynamo.ts";
import { createTableClient, type TableClient } from "#shared/store/table-client.ts";
import { fakeAwsService, type Answer, type Call } from "../support/fake-aws-service.ts";

let table: TableClient;
let server: Server;

afterEach(() => {
  table?.destroy();
  server?.close();
});

async function tableAt(answer: (call: Call) => Answer): Promise<Call[]> {
  const fake = await fakeAwsService(answer);
  server = fake.server;
  table = createTableClient({ region: "us-east-1", endpoint: fake.endpoint });
  return fake.calls;
}

const target = (call: Call | undefined) => call?.headers["x-amz-target"];

describe("the table client over DynamoDB's JSON protocol", () => {
  it("marshals keys, items and expression values, and unmarshals what comes back", async () => {
    const calls = await tableAt((call) =>
      target(call) === "DynamoDB_20120810.Query"
        ? { status: 200, body: { Items: [{ pk: { S: "a" }, n: { N: "2" } }], LastEvaluatedKey: { pk: { S: "a" }, sk: { S: "z" } } } }
        : { status: 200, body: {} },
    );

    await table.put({ TableName: "t", Item: { pk: "a", sk: "b", count: 3, tags: ["x"], gone: undefined, nested: { on: true } } });
    const page = await table.query({ TableName: "t", KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "a" }, ExclusiveStartKey: { pk: "a", sk: "m" } });

    expect(calls[0]?.input).toEqual({
      TableName: "t",
      Item: { pk: { S: "a" }, sk: { S: "b" }, count: { N: "3" }, tags: { L: [{ S: "x" }] }, nested: { M: { on: { BOOL: true } } } },
    });
    expect(calls[1]?.input).toMatchObject({ ExpressionAttributeValues: { ":pk": { S: "a" } }, ExclusiveStartKey: { pk: { S: "a" }, sk: { S: "m" } } });
    expect(page).toEqual({ Items: [{ pk: "a", n: 2 }], LastEvaluatedKey: { pk: "a", sk: "z" } });
  });

  it("sends the writes a batch left unprocessed again, until none is left", async () => {
    const leftOver = [{ DeleteRequest: { Key: { pk: { S: "b" }, sk: { S: "2" } } } }];
    let answered = 0;
    const calls = await tableAt(() => ({ status: 200, body: answered++ === 0 ? { UnprocessedItems: { t: leftOver } } : { UnprocessedItems: {} } }));

    await table.batchWrite({ t: [{ DeleteRequest: { Key: { pk: "a", sk: "1" } } }, { DeleteRequest: { Key: { pk: "b", sk: "2" } } }] });

    expect(calls.map((call) => call.input)).toEqual([
      { RequestItems: { t: [{ DeleteRequest: { Key: { pk: { S: "a" }, sk: { S: "1" } } } }, ...leftOver] } },
      { RequestItems: { t: leftOver } },
    ]);
  });

  it("sends a transaction again after a 5xx with the same idempotency token", async () => {
    let answered = 0;
    const calls = await tableAt(() => (answered++ === 0 ? { status: 500, body: { __type: "InternalServerError" } } : { status: 200, body: {} }));

    await table.transactWrite([{ Put: { TableName: "t", Item: { pk: "a", sk: "1" } } }]);

    const tokens = calls.map((call) => call.input.ClientRequestToken);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(tokens[1]).toBe(tokens[0]);
  });

  it("reads a cancelled transaction's reasons, item by item", async () => {
    await tableAt(() => ({
      status: 400,
      body: {
        __type: "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        message: "Transaction cancelled",
        CancellationReasons: [{ Code: "None" }, { Code: "ConditionalCheckFailed", Message: "The conditional request failed" }],
      },
    }));

    const outcome = await transact(table, {
      TransactItems: [
        { Put: { TableName: "t", Item: { pk: "a", sk: "1" } } },
        { ConditionCheck: { TableName: "t", Key: { pk: "a", sk: "2" }, ConditionExpression: "attribute_exists(pk)" } },
      ],
    });

    expect(outcome).toEqual({ committed: false, reasons: ["None", "ConditionalCheckFailed"] });
  });
});
