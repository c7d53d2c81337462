import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { connect } from "node:net";
import { localClient } from "../../infra/local/dynamodb-local.ts";
import type { startTestStack } from "./stack.ts";

type TestStack = Awaited<ReturnType<typeof startTestStack>>;

/** A request as a careless or hostile client sends it: any body, any content type, any or no key. */
export interface Attempt {
  json?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  /** The Authorization header; null sends none; absent sends the stack's API key. */
  auth?: string | null;
}

/** Bad-input tests: raw requests to the gateway, and the table's whole contents to show nothing changed. */
export function rawAccess(stack: TestStack) {
  const db = DynamoDBDocumentClient.from(localClient(stack.dynamoEndpoint));
  return {
    send(method: string, path: string, attempt: Attempt = {}): Promise<Response> {
      const headers: Record<string, string> = {};
      if (attempt.auth !== null) headers.authorization = attempt.auth ?? `Bearer ${stack.apiKey}`;
      const body = attempt.json !== undefined ? JSON.stringify(attempt.json) : attempt.raw;
      if (body !== undefined) headers["content-type"] = attempt.contentType ?? "application/json";
      return fetch(`${stack.url}${path}`, { method, headers, body });
    },

    async tableContents() {
      const scan = await db.send(new ScanCommand({ TableName: stack.tableName, ConsistentRead: true }));
      return (scan.Items ?? []).sort((a, b) => `${a.pk}${a.sk}`.localeCompare(`${b.pk}${b.sk}`));
    },
  };
}

/**
 * Writes `request` as it is to the server at `url` (fetch refuses to send a malformed request line)
 * and answers all the server sent back before it closed the connection.
 */
export function rawHttpExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.once("error", fail);
    socket.once("close", () => done(answer));
  });
}
