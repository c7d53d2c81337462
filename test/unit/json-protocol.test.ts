import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { jsonServiceClient, type JsonServiceClient } from "#shared/aws/json-protocol.ts";
import { AwsServiceError } from "#shared/aws/signed-requests.ts";
import { kmsDataKeys } from "#shared/secrets/kms-envelope.ts";
import { SecretOpenError } from "#shared/secrets/aes-gcm.ts";
import { fakeAwsService, type Answer, type Call } from "../support/fake-aws-service.ts";

const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" };
let client: JsonServiceClient;
let server: Server;

afterEach(() => {
  client?.destroy();
  server?.close();
});

async function kmsAt(answer: (call: Call) => Answer) {
  const fake = await fakeAwsService(answer);
  server = fake.server;
  client = jsonServiceClient({ service: "kms", targetPrefix: "TrentService", jsonVersion: "1.1", region: "eu-west-1", endpoint: fake.endpoint, credentials });
  return fake.calls;
}

describe("the AWS JSON protocol", () => {
  it("posts the operation as its target and signs for the service", async () => {
    const calls = await kmsAt(() => ({ status: 200, body: { KeyId: "k" } }));

    const answer = await client.call<{ KeyId: string }>("DescribeKey", { KeyId: "alias/x" });

    expect(answer).toEqual({ KeyId: "k" });
    expect(calls[0]?.headers["x-amz-target"]).toBe("TrentService.DescribeKey");
    expect(calls[0]?.headers["content-type"]).toBe("application/x-amz-json-1.1");
    expect(calls[0]?.headers.authorization).toMatch(/\/eu-west-1\/kms\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target,/);
    expect(calls[0]?.input).toEqual({ KeyId: "alias/x" });
  });

  it("names a service error by its type, namespace dropped", async () => {
    await kmsAt(() => ({ status: 400, body: { __type: "com.amazonaws.kms#NotFoundException", message: "no such key" } }));

    const failure = client.call("DescribeKey", {});

    await expect(failure).rejects.toBeInstanceOf(AwsServiceError);
    await expect(failure).rejects.toMatchObject({ status: 400, code: "NotFoundException", message: expect.stringContaining("no such key") });
  });

  it("takes the error's name from the x-amzn-errortype header when the document has none", async () => {
    await kmsAt(() => ({ status: 400, body: { message: "slow down" }, headers: { "x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/" } }));

    await expect(client.call("DescribeKey", {})).rejects.toMatchObject({ code: "ThrottlingException" });
  });

  it("tries a throttled call again, and gives up after three", async () => {
    let throttled = 1;
    const calls = await kmsAt(() => (throttled-- > 0 ? { status: 400, body: { __type: "ThrottlingException" } } : { status: 200, body: {} }));
    await client.call("DescribeKey", {});
    expect(calls).toHaveLength(2);

    client.destroy();
    server.close();
    const alwaysThrottled = await kmsAt(() => ({ status: 400, body: { __type: "ThrottlingException" } }));
    await expect(client.call("DescribeKey", {})).rejects.toMatchObject({ code: "ThrottlingException" });
    expect(alwaysThrottled).toHaveLength(3);
  });
});

describe("KMS data keys over the JSON protocol", () => {
  it("sends and reads the key blobs as base64, with the encryption context", async () => {
    const plaintext = Buffer.alloc(32, 7);
    const encrypted = Buffer.from("wrapped key");
    const calls = await kmsAt((call) =>
      call.headers["x-amz-target"] === "TrentService.GenerateDataKey"
        ? { status: 200, body: { Plaintext: plaintext.toString("base64"), CiphertextBlob: encrypted.toString("base64"), KeyId: "k" } }
        : { status: 200, body: { Plaintext: plaintext.toString("base64"), KeyId: "k" } },
    );
    const dataKeys = kmsDataKeys(client, "alias/secrets");
    const context = { org: "o", credential: "c" };

    const generated = await dataKeys.generateDataKey(context);
    const opened = await dataKeys.decrypt(generated.encrypted, context);

    expect(Buffer.from(generated.plaintext)).toEqual(plaintext);
    expect(Buffer.from(generated.encrypted)).toEqual(encrypted);
    expect(Buffer.from(opened)).toEqual(plaintext);
    expect(calls.map((call) => call.input)).toEqual([
      { KeyId: "alias/secrets", KeySpec: "AES_256", EncryptionContext: context },
      { KeyId: "alias/secrets", CiphertextBlob: encrypted.toString("base64"), EncryptionContext: context },
    ]);
  });

  it("turns KMS's refusal of a blob or context into a SecretOpenError", async () => {
    await kmsAt(() => ({ status: 400, body: { __type: "InvalidCiphertextException" } }));

    await expect(kmsDataKeys(client, "k").decrypt(Buffer.from("tampered"), { org: "o" })).rejects.toBeInstanceOf(SecretOpenError);
  });
});
