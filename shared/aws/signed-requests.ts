import { defaultProvider } from "@aws-sdk/credential-provider-node";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { sha256Hex, sigV4Signer, unsignedPayload, type AwsCredentials } from "./sigv4.ts";

// Not ESM imports: `node:http`'s ESM facade loads undici (see shared/login/http.ts), about 15 ms
// of every function's cold start, since every function calls AWS through here.
const http = process.getBuiltinModule("node:http");
const https = process.getBuiltinModule("node:https");

export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface AwsServiceSettings {
  /** The signing name: "dynamodb", "s3", "states", "kms". */
  service: string;
  region: string;
  /** Fixed credentials for a local stand-in; unset, the default chain answers (the role's, in Lambda). */
  credentials?: StaticCredentials;
  /** Replayable requests (no body or a Buffer) retried after a dropped connection or a 5xx. */
  maxAttempts?: number;
  /** How long the service may take to start answering (30 s); a body then streams for as long as it takes. */
  answerTimeoutMs?: number;
}

export interface AwsRequest {
  method: "GET" | "PUT" | "POST" | "DELETE";
  url: URL;
  headers?: Record<string, string>;
  /** A stream must come with its `content-length` header and is sent once, never retried. */
  body?: Buffer | Readable;
}

export interface AwsRequester {
  /** Any status comes back as a response; only a connection failure rejects. */
  send(request: AwsRequest): Promise<IncomingMessage>;
  destroy(): void;
}

/** A service answered with an error; `code` is its own name for it (NoSuchKey, ThrottlingException). */
export class AwsServiceError extends Error {
  override name = "AwsServiceError";
  readonly status: number;
  readonly code: string;
  /** The error document's other fields (DynamoDB's CancellationReasons). */
  readonly details: Record<string, unknown>;

  constructor(service: string, status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(`${service} answered ${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/**
 * Signs and sends requests over one keep-alive connection pool per service. The full SDK clients
 * carry a generic middleware stack and every operation of their service; the few calls this
 * service makes need neither, and leaving them out keeps each function's bundle small.
 */
export function awsRequester(settings: AwsServiceSettings): AwsRequester {
  const sign = sigV4Signer(settings);
  const staticCredentials = settings.credentials;
  const credentials: () => Promise<AwsCredentials> = staticCredentials ? () => Promise.resolve(staticCredentials) : defaultProvider();
  const agents = { "http:": new http.Agent({ keepAlive: true }), "https:": new https.Agent({ keepAlive: true }) };
  const maxAttempts = settings.maxAttempts ?? 3;
  const answerTimeoutMs = settings.answerTimeoutMs ?? 30_000;

  /** Signed afresh on each attempt, as its date moves on; the body's hash is taken once, by `send`. */
  async function sendOnce(request: AwsRequest, payloadHash: string): Promise<IncomingMessage> {
    const { url, body } = request;
    const headers = sign({ method: request.method, url, headers: request.headers ?? {}, payloadHash }, await credentials());
    const transport = url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const outgoing = transport.request(url, { method: request.method, headers, agent: agents[url.protocol as "http:" | "https:"] });
      outgoing.once("response", (response) => {
        // Only the wait for an answer is bounded: a streamed body may rest while its reader is slow.
        outgoing.setTimeout(0);
        resolve(response);
      });
      outgoing.once("error", reject);
      outgoing.setTimeout(answerTimeoutMs, () => outgoing.destroy(new Error(`${settings.service} did not answer within ${answerTimeoutMs} ms`)));
      if (body === undefined) outgoing.end();
      else if (Buffer.isBuffer(body)) outgoing.end(body);
      else {
        body.once("error", (error) => outgoing.destroy(error));
        body.pipe(outgoing);
      }
    });
  }

  return {
    async send(request) {
      const { body } = request;
      const replayable = body === undefined || Buffer.isBuffer(body);
      const payloadHash = body === undefined ? emptyPayloadHash : Buffer.isBuffer(body) ? sha256Hex(body) : unsignedPayload;
      for (let attempt = 1; ; attempt++) {
        const last = !replayable || attempt >= maxAttempts;
        let response: IncomingMessage;
        try {
          response = await sendOnce(request, payloadHash);
        } catch (error) {
          if (last) throw error;
          await sleep(backoffMs(attempt));
          continue;
        }
        if (last || (response.statusCode ?? 0) < 500) return response;
        response.resume();
        await sleep(backoffMs(attempt));
      }
    },
    destroy() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}

const emptyPayloadHash = sha256Hex("");

/** The domain of the region's AWS endpoints: China's regions have their own. */
export function awsDnsSuffix(region: string): string {
  return region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com";
}

export function backoffMs(attempt: number): number {
  return Math.random() * 50 * 2 ** attempt;
}

/** An error document's bound. */
export const maxErrorDocumentBytes = 64 * 1024;

/**
 * Reads a response body whole (an error document, a JSON answer); one over `maxBytes` is an error.
 * Listens for its chunks rather than iterating it: the stream's async iterator cost about 30 µs
 * more CPU a request, measured on loopback, and every DynamoDB call reads its answer here.
 */
export function readWholeBody(response: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    response.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) response.destroy(new Error(`an answer over ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    response.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    response.once("error", reject);
  });
}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
