import { KMSClient } from "@aws-sdk/client-kms";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { tableClient } from "#shared/composition/table.ts";
import { loadConfig } from "#shared/config.ts";
import { ServiceUnavailableError } from "#shared/domain/errors.ts";
import { log } from "#shared/log.ts";
import { SecretOpenError } from "#shared/secrets/aes-gcm.ts";
import { kmsDataKeys, kmsEnvelopeBox } from "#shared/secrets/kms-envelope.ts";
import { transact, writeBatch } from "#shared/store/dynamo.ts";
import { fakeAwsService, type Answer, type Call } from "../support/fake-aws-service.ts";

/** What the AWS service stand-in answers next, by operation (the `X-Amz-Target` after the dot). */
let answers: Record<string, (call: Call) => Answer>;
let service: Awaited<ReturnType<typeof fakeAwsService>>;

beforeAll(async () => {
  service = await fakeAwsService((call) => {
    const operation = String(call.headers["x-amz-target"]).split(".")[1] ?? "";
    const answer = answers[operation];
    if (!answer) throw new Error(`no answer scripted for ${operation}`);
    return answer(call);
  });
});

afterAll(() => service?.server.close());
afterEach(() => vi.restoreAllMocks());

const callsOf = (operation: string) => service.calls.filter((call) => call.headers["x-amz-target"] === `DynamoDB_20120810.${operation}`);
const db = () => tableClient(loadConfig({ ...process.env, DYNAMODB_ENDPOINT: service.endpoint }));
const cancelled = (...codes: string[]): Answer => ({
  status: 400,
  body: { __type: "com.amazonaws.dynamodb.v20120810#TransactionCanceledException", Message: "cancelled", CancellationReasons: codes.map((Code) => ({ Code })) },
});
const putItem = (id: string) => ({ Put: { TableName: "t", Item: { pk: id, sk: id } } });

describe("the DynamoDB adapter's own retries", () => {
  it("sends again, until none is left, the writes a batch left unprocessed", async () => {
    const before = callsOf("BatchWriteItem").length;
    let calls = 0;
    answers = {
      BatchWriteItem: (call) => {
        calls++;
        // First time round, DynamoDB processes all but the last request.
        const requests = (call.input.RequestItems as Record<string, unknown[]>).t ?? [];
        return { status: 200, body: calls === 1 ? { UnprocessedItems: { t: requests.slice(-1) } } : {} };
      },
    };
    const requests = ["a", "b", "c"].map((id) => ({ DeleteRequest: { Key: { pk: id, sk: id } } }));
    await writeBatch(db(), { t: requests });
    const sent = callsOf("BatchWriteItem").slice(before);
    expect(sent.map((call) => (call.input.RequestItems as Record<string, unknown[]>).t?.length)).toEqual([3, 1]);
    expect(JSON.stringify(sent[1]?.input)).toContain('"c"');
  });

  it("answers a transaction cancelled by a condition as not committed, with the reasons in request order", async () => {
    answers = { TransactWriteItems: () => cancelled("None", "ConditionalCheckFailed") };
    await expect(transact(db(), { TransactItems: [putItem("a"), putItem("b")] })).resolves.toEqual({ committed: false, reasons: ["None", "ConditionalCheckFailed"] });
  });

  it("tries a transaction cancelled by throttling again, and commits when the table lets it", async () => {
    let calls = 0;
    answers = { TransactWriteItems: () => (++calls < 3 ? cancelled("ThrottlingError", "None") : { status: 200, body: {} }) };
    await expect(transact(db(), { TransactItems: [putItem("a"), putItem("b")] })).resolves.toEqual({ committed: true });
    expect(calls).toBe(3);
  });

  it("throws a transaction cancelled for any other reason: a bug, not an outcome", async () => {
    answers = { TransactWriteItems: () => cancelled("ValidationError") };
    await expect(transact(db(), { TransactItems: [putItem("a")] })).rejects.toMatchObject({ name: "TransactionCanceledException" });
  });
});

describe("an AWS error in the log", () => {
  it("carries the service, operation, request id and fault of an outage", async () => {
    const warnings = vi.spyOn(log, "warn").mockImplementation(() => {});
    answers = { GetItem: () => ({ status: 503, body: { __type: "com.amazonaws.dynamodb.v20120810#InternalServerError" }, headers: { "x-amzn-requestid": "REQ-OUTAGE-1" } }) };
    await expect(db().send(new GetCommand({ TableName: "t", Key: { pk: "a", sk: "a" } }))).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(warnings).toHaveBeenCalledWith(
      expect.stringContaining("service unavailable"),
      expect.objectContaining({ service: "DynamoDBClient", operation: "GetItemCommand", error: expect.objectContaining({ awsRequestId: "REQ-OUTAGE-1", fault: "server" }) }),
    );
  });
});

describe("the KMS data keys", () => {
  const kms = () => new KMSClient({ region: "us-east-1", endpoint: service.endpoint });
  const plaintextKey = randomBytes(32);
  const encryptedKey = randomBytes(64);

  it("seal with a generated data key and open with the key KMS decrypts, each bound to the context", async () => {
    const contexts: unknown[] = [];
    answers = {
      GenerateDataKey: (call) => {
        contexts.push(call.input.EncryptionContext);
        return { status: 200, body: { Plaintext: plaintextKey.toString("base64"), CiphertextBlob: encryptedKey.toString("base64"), KeyId: "k" } };
      },
      Decrypt: (call) => {
        contexts.push(call.input.EncryptionContext);
        expect(call.input.CiphertextBlob).toBe(encryptedKey.toString("base64"));
        return { status: 200, body: { Plaintext: plaintextKey.toString("base64"), KeyId: "k" } };
      },
    };
    const context = { org: "o", credential: "cr_1" };
    const sealed = await kmsEnvelopeBox(kmsDataKeys(kms(), "k")).seal("the secret", context);
    // A box of its own has no cached key: it asks KMS.
    await expect(kmsEnvelopeBox(kmsDataKeys(kms(), "k")).open(sealed, context)).resolves.toBe("the secret");
    expect(contexts).toEqual([context, context]);
  });

  it("turn KMS's refusal of a data key into a secret that cannot be opened", async () => {
    answers = { Decrypt: () => ({ status: 400, body: { __type: "InvalidCiphertextException", message: "refused" } }) };
    await expect(kmsDataKeys(kms(), "k").decrypt(encryptedKey, { org: "o" })).rejects.toBeInstanceOf(SecretOpenError);
  });
});
