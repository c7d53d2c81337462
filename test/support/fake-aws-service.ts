import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { text } from "node:stream/consumers";

export interface Call {
  headers: IncomingHttpHeaders;
  input: Record<string, unknown>;
}

export type Answer = { status: number; body: object; headers?: Record<string, string> };

/** A loopback stand-in for a JSON-protocol service, answering each call from `answer`. */
export async function fakeAwsService(answer: (call: Call) => Answer): Promise<{ endpoint: string; calls: Call[]; server: Server }> {
  const calls: Call[] = [];
  const server = createServer(async (request, response) => {
    const call = { headers: request.headers, input: JSON.parse(await text(request)) as Record<string, unknown> };
    calls.push(call);
    const { status, body, headers } = answer(call);
    response.writeHead(status, { "content-type": "application/x-amz-json-1.1", ...headers }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}
