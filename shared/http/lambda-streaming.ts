import type { APIGatewayProxyEvent } from "aws-lambda";
import type { Writable } from "node:stream";

/** The part of the Lambda Node.js runtime's `awslambda` global that response streaming uses. */
export interface AwsLambdaStreaming {
  streamifyResponse(handler: (event: APIGatewayProxyEvent, responseStream: Writable) => Promise<void>): unknown;
  HttpResponseStream: {
    from(responseStream: Writable, metadata: { statusCode: number; headers: Record<string, string> }): Writable;
  };
}

/**
 * The runtime's global in Lambda; elsewhere a stand-in with the same contract: the metadata is
 * handed to the stream's `writeHead` (the local gateway's response stream has one), then the body.
 * The AWS SDK also creates an `awslambda` global (for its invoke store), so the test is for the
 * streaming function itself, made when a handler is built.
 */
export function lambdaStreaming(): AwsLambdaStreaming {
  const runtime = (globalThis as { awslambda?: Partial<AwsLambdaStreaming> }).awslambda;
  return typeof runtime?.streamifyResponse === "function" ? (runtime as AwsLambdaStreaming) : localStreaming;
}

const localStreaming: AwsLambdaStreaming = {
  streamifyResponse: (handler) => Object.assign(handler, { streaming: true }),
  HttpResponseStream: {
    from(responseStream, metadata) {
      (responseStream as Writable & { writeHead(statusCode: number, headers: Record<string, string>): void }).writeHead(
        metadata.statusCode,
        metadata.headers,
      );
      return responseStream;
    },
  },
};
