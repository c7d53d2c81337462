import { setTimeout as sleep } from "node:timers/promises";
import { awsDnsSuffix, awsRequester, AwsServiceError, backoffMs, header, readWholeBody, type StaticCredentials } from "./signed-requests.ts";

export interface JsonServiceSettings {
  /** The signing name and endpoint prefix: "dynamodb", "states", "kms". */
  service: string;
  /** The `X-Amz-Target` prefix: "DynamoDB_20120810", "AWSStepFunctions", "TrentService". */
  targetPrefix: string;
  /** "1.0" or "1.1", as the service's protocol says. */
  jsonVersion: "1.0" | "1.1";
  region: string;
  /** A local stand-in, signed for with fixed credentials; unset, the service's regional endpoint. */
  endpoint?: string;
  /** Overrides the stand-in's fixed credentials (or, without an endpoint, the default chain). */
  credentials?: StaticCredentials;
}

export interface JsonServiceClient {
  /** The parsed answer; a service error rejects with an AwsServiceError whose code is the error's name. */
  call<Answer>(operation: string, input: object): Promise<Answer>;
  destroy(): void;
}

/** DynamoDB Local and the local Step Functions endpoint accept any signature. */
const standInCredentials: StaticCredentials = { accessKeyId: "local", secretAccessKey: "local" };

const throttlingCodes = new Set(["ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded", "ProvisionedThroughputExceededException"]);
const maxThrottledAttempts = 3;
/** A DynamoDB page is at most 1 MB of items, which its JSON encoding can about double. */
const maxAnswerBytes = 4 * 1024 * 1024;

/** A client for the AWS JSON protocol (DynamoDB, Step Functions, KMS): one signed POST an operation. */
export function jsonServiceClient(settings: JsonServiceSettings): JsonServiceClient {
  const requester = awsRequester({
    service: settings.service,
    region: settings.region,
    credentials: settings.credentials ?? (settings.endpoint ? standInCredentials : undefined),
  });
  const url = new URL(settings.endpoint ?? `https://${settings.service}.${settings.region}.${awsDnsSuffix(settings.region)}/`);
  const contentType = `application/x-amz-json-${settings.jsonVersion}`;

  return {
    async call<Answer>(operation: string, input: object): Promise<Answer> {
      const body = Buffer.from(JSON.stringify(input));
      for (let attempt = 1; ; attempt++) {
        const response = await requester.send({
          method: "POST",
          url,
          headers: { "content-type": contentType, "x-amz-target": `${settings.targetPrefix}.${operation}` },
          body,
        });
        const text = await readWholeBody(response, maxAnswerBytes);
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) return JSON.parse(text || "{}") as Answer;
        const error = serviceError(settings.service, status, text, header(response.headers, "x-amzn-errortype"));
        if (!throttlingCodes.has(error.code) || attempt >= maxThrottledAttempts) throw error;
        await sleep(backoffMs(attempt));
      }
    },
    destroy: () => requester.destroy(),
  };
}

function serviceError(service: string, status: number, text: string, typeHeader: string | undefined): AwsServiceError {
  let document: { __type?: string; message?: string; Message?: string } & Record<string, unknown> = {};
  try {
    document = JSON.parse(text) as typeof document;
  } catch {
    // Not JSON (a proxy's page): the status alone names it.
  }
  // Types come as "ErrorName" or "namespace#ErrorName", in the document or else in a header ("ErrorName:uri").
  const code = (document.__type ?? typeHeader?.split(":")[0])?.split("#").at(-1) ?? `Http${status}`;
  const { __type, message, Message, ...details } = document;
  return new AwsServiceError(service, status, code, message ?? Message ?? "no error document", details);
}
