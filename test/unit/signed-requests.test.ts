import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { afterEach, describe, expect, it } from "vitest";
import { awsRequester, readWholeBody, type AwsRequester } from "#shared/aws/signed-requests.ts";

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback server that answers each request with the next scripted reply. */
async function scriptedServer(replies: ((response: ServerResponse) => void)[]): Promise<{ url: URL; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer(async (request, response) => {
    received.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: await text(request) });
    const reply = replies.shift() ?? ((late) => late.writeHead(500).end());
    reply(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket/key`), received, server };
}

/**
 * What S3 checks, written from the SigV4 specification: the signature recomputed from the request
 * as it arrived. Anchored by AWS's published GET Object example below.
 */
function expectedSignature(request: { method: string; url: string; headers: IncomingHttpHeaders }, secretAccessKey: string): string | undefined {
  const authorization = /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=/.exec(String(request.headers.authorization));
  if (!authorization) return undefined;
  const [, day, region, service, signedHeaders] = authorization as unknown as [string, string, string, string, string];
  const [path, query = ""] = request.url.split("?") as [string, string?];
  const canonicalQuery = query.split("&").filter(Boolean).sort().join("&");
  const headerLines = signedHeaders.split(";").map((name) => `${name}:${String(request.headers[name]).trim()}\n`).join("");
  const canonicalRequest = [request.method, path, canonicalQuery, headerLines, signedHeaders, request.headers["x-amz-content-sha256"]].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", request.headers["x-amz-date"], scope, createHash("sha256").update(canonicalRequest).digest("hex")].join("\n");
  const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();
  const signingKey = [day, region, service, "aws4_request"].reduce<Buffer | string>((key, part) => hmac(key, part), `AWS4${secretAccessKey}`);
  return createHmac("sha256", signingKey).update(stringToSign).digest("hex");
}

const ok = (body = "done") => (response: ServerResponse) => response.writeHead(200, { "content-length": String(body.length) }).end(body);
const unavailable = (response: ServerResponse) => response.writeHead(503).end("<Error><Code>SlowDown</Code></Error>");
const dropped = (response: ServerResponse) => response.socket?.destroy();

const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
let requester: AwsRequester;
let server: Server;

afterEach(() => {
  requester?.destroy();
  server?.close();
});

describe("signed AWS requests", () => {
  it("has a signature check that agrees with AWS's published example", () => {
    const example = {
      method: "GET",
      url: "/test.txt",
      headers: {
        host: "examplebucket.s3.amazonaws.com",
        range: "bytes=0-9",
        "x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "x-amz-date": "20130524T000000Z",
        authorization:
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
      },
    };

    expect(expectedSignature(example, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")).toBe("f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  });

  it("signs what it sends, path and query included, as S3 recomputes it", async () => {
    const scripted = await scriptedServer([ok(), ok()]);
    server = scripted.server;
    requester = awsRequester({ service: "s3", region: "eu-west-3", credentials });
    const url = new URL("/bucket/profiles/org%2A/state.tar.zst?versionId=2&acl=", scripted.url);

    await (await requester.send({ method: "GET", url, headers: { "content-type": "application/zstd" } })).resume();
    await (await requester.send({ method: "PUT", url, body: Buffer.from("signed bytes") })).resume();

    for (const request of scripted.received) {
      const signature = /Signature=([0-9a-f]{64})$/.exec(String(request.headers.authorization))?.[1];
      expect(signature).toBe(expectedSignature(request, credentials.secretAccessKey));
    }
    expect(scripted.received[1]?.headers["x-amz-content-sha256"]).toBe(createHash("sha256").update("signed bytes").digest("hex"));
  });

  it("signs with the service's scope and states the payload hash", async () => {
    const scripted = await scriptedServer([ok(), ok()]);
    server = scripted.server;
    requester = awsRequester({ service: "s3", region: "eu-west-3", credentials });

    await (await requester.send({ method: "GET", url: scripted.url })).resume();
    await (await requester.send({ method: "PUT", url: scripted.url, headers: { "content-length": "5" }, body: Readable.from([Buffer.from("hello")]) })).resume();

    const [get, put] = scripted.received;
    expect(get?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-3\/s3\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
    expect(get?.headers["x-amz-content-sha256"]).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(put?.headers["x-amz-content-sha256"]).toBe("UNSIGNED-PAYLOAD");
    expect(put?.body).toBe("hello");
  });

  it("retries a replayable request after a 5xx and after a dropped connection", async () => {
    const scripted = await scriptedServer([unavailable, dropped, ok("third time")]);
    server = scripted.server;
    requester = awsRequester({ service: "s3", region: "us-east-1", credentials });

    const response = await requester.send({ method: "PUT", url: scripted.url, body: Buffer.from("same bytes") });

    expect(response.statusCode).toBe(200);
    expect(await text(response)).toBe("third time");
    expect(scripted.received.map((request) => request.body)).toEqual(["same bytes", "same bytes", "same bytes"]);
  });

  it("hands back the last 5xx once its attempts are spent", async () => {
    const scripted = await scriptedServer([unavailable, unavailable]);
    server = scripted.server;
    requester = awsRequester({ service: "s3", region: "us-east-1", credentials, maxAttempts: 2 });

    const response = await requester.send({ method: "GET", url: scripted.url });

    expect(response.statusCode).toBe(503);
    expect(await text(response)).toContain("SlowDown");
    expect(scripted.received).toHaveLength(2);
  });

  it("gives up on a service that does not start answering, but lets a started answer rest", async () => {
    const silent = (response: ServerResponse) => setTimeout(() => response.writeHead(200).end("late"), 1000);
    const slowBody = (response: ServerResponse) => {
      response.writeHead(200, { "content-length": "8" }).write("first ");
      setTimeout(() => response.end("ok"), 300);
    };
    const scripted = await scriptedServer([silent, slowBody]);
    server = scripted.server;
    requester = awsRequester({ service: "s3", region: "us-east-1", credentials, maxAttempts: 1, answerTimeoutMs: 100 });

    await expect(requester.send({ method: "GET", url: scripted.url })).rejects.toThrow("s3 did not answer within 100 ms");
    const slow = await requester.send({ method: "GET", url: scripted.url });

    expect(await text(slow)).toBe("first ok");
  });

  it("reads an answer whole up to its bound, and refuses a longer one", async () => {
    const twoKilobytes = "x".repeat(2048);
    const scripted = await scriptedServer([ok(twoKilobytes), ok(twoKilobytes)]);
    server = scripted.server;
    requester = awsRequester({ service: "dynamodb", region: "us-east-1", credentials });

    const whole = readWholeBody(await requester.send({ method: "GET", url: scripted.url }), 4096);
    const refused = readWholeBody(await requester.send({ method: "GET", url: scripted.url }), 1024);

    await expect(whole).resolves.toBe(twoKilobytes);
    await expect(refused).rejects.toThrow("an answer over 1024 bytes");
  });

  it("sends a streamed body once, without retrying it", async () => {
    const scripted = await scriptedServer([unavailable, ok()]);
    server = scripted.server;
    requester = awsRequester({ service: "s3", region: "us-east-1", credentials });

    const response = await requester.send({ method: "PUT", url: scripted.url, headers: { "content-length": "3" }, body: Readable.from([Buffer.from("abc")]) });

    expect(response.statusCode).toBe(503);
    response.resume();
    expect(scripted.received).toHaveLength(1);
  });
});
