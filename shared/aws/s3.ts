import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { awsDnsSuffix, awsRequester, AwsServiceError, header, maxErrorDocumentBytes, readWholeBody } from "./signed-requests.ts";
import { encodeRfc3986 } from "./sigv4.ts";

export interface S3Settings {
  region: string;
  /** Set only against a stand-in (s3rver), addressed path-style; unset in AWS. */
  endpoint?: string;
}

/** The object calls this service makes, over S3's REST protocol. */
export interface S3Objects {
  put(bucket: string, key: string, object: { body: Buffer | Readable; size: number; contentType: string }): Promise<{ etag: string }>;
  /** Undefined when there is no such key. */
  get(bucket: string, key: string): Promise<{ body: IncomingMessage; size: number } | undefined>;
  /** Succeeds whether or not the key exists. */
  remove(bucket: string, key: string): Promise<void>;
  /** Succeeds when the bucket already exists and is ours. */
  createBucket(bucket: string): Promise<void>;
  destroy(): void;
}

export function createS3Client(settings: S3Settings): S3Objects {
  const requester = awsRequester({
    service: "s3",
    region: settings.region,
    ...(settings.endpoint ? { credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } } : {}),
  });
  const objectUrl = objectAddressing(settings);

  return {
    async put(bucket, key, { body, size, contentType }) {
      const response = await requester.send({
        method: "PUT",
        url: objectUrl(bucket, key),
        headers: { "content-length": String(size), "content-type": contentType },
        body,
      });
      await expectSuccess(response, `PUT ${key}`);
      const etag = header(response.headers, "etag");
      if (etag === undefined) throw new Error(`S3 returned no ETag for ${key}`);
      return { etag };
    },

    async get(bucket, key) {
      const response = await requester.send({ method: "GET", url: objectUrl(bucket, key) });
      if (response.statusCode === 404) {
        const error = await serviceError(response);
        if (error.code === "NoSuchKey") return undefined;
        throw error;
      }
      if (response.statusCode !== 200) throw await serviceError(response);
      const size = Number(header(response.headers, "content-length"));
      if (!Number.isSafeInteger(size)) {
        response.destroy();
        throw new Error(`S3 returned no content length for ${key}`);
      }
      return { body: response, size };
    },

    async remove(bucket, key) {
      await expectSuccess(await requester.send({ method: "DELETE", url: objectUrl(bucket, key) }), `DELETE ${key}`);
    },

    async createBucket(bucket) {
      const response = await requester.send({ method: "PUT", url: objectUrl(bucket, "") });
      if (response.statusCode === 409) {
        const error = await serviceError(response);
        if (error.code === "BucketAlreadyOwnedByYou" || error.code === "BucketAlreadyExists") return;
        throw error;
      }
      await expectSuccess(response, `PUT bucket ${bucket}`);
    },

    destroy: () => requester.destroy(),
  };
}

function objectAddressing(settings: S3Settings): (bucket: string, key: string) => URL {
  const encodedKey = (key: string) => key.split("/").map(encodeRfc3986).join("/");
  if (settings.endpoint) {
    const base = settings.endpoint.replace(/\/+$/, "");
    return (bucket, key) => new URL(`${base}/${encodeRfc3986(bucket)}/${encodedKey(key)}`);
  }
  const dnsSuffix = awsDnsSuffix(settings.region);
  return (bucket, key) => new URL(`https://${bucket}.s3.${settings.region}.${dnsSuffix}/${encodedKey(key)}`);
}

async function expectSuccess(response: IncomingMessage, what: string): Promise<void> {
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 299) throw await serviceError(response, what);
  response.resume();
}

async function serviceError(response: IncomingMessage, what?: string): Promise<AwsServiceError> {
  const status = response.statusCode ?? 0;
  const document = await readWholeBody(response, maxErrorDocumentBytes).catch(() => "");
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(document)?.[1];
  const code = field("Code") ?? `Http${status}`;
  return new AwsServiceError("S3", status, code, [what, field("Message") ?? "no error document"].filter(Boolean).join(": "));
}
