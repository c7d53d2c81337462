import { Agent, request } from "node:http";

export interface HttpReply {
  status: number;
  /** Kept as bytes: most calls only check the status, so decoding is left to those that read it. */
  body: Buffer;
}

export interface KeepAliveClient {
  send(method: string, path: string, json?: unknown): Promise<HttpReply>;
  close(): void;
}

/** A bearer-authenticated JSON client over node:http, reusing up to `maxSockets` connections. */
export function keepAliveClient(baseUrl: string, options: { bearer: string; maxSockets: number }): KeepAliveClient {
  const { hostname, port } = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets });
  const authorization = `Bearer ${options.bearer}`;

  return {
    send(method, path, json) {
      const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
      const headers: Record<string, string> = { authorization };
      if (payload) {
        headers["content-type"] = "application/json";
        headers["content-length"] = String(payload.length);
      }
      return new Promise((resolve, reject) => {
        const outgoing = request({ host: hostname, port, path, method, headers, agent }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.once("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
          response.once("error", reject);
        });
        outgoing.once("error", reject);
        outgoing.end(payload);
      });
    },

    close() {
      agent.destroy();
    },
  };
}

/** The reply, when it has the status expected; otherwise an error naming `what` and quoting the body. */
export function expectStatus(reply: HttpReply, expected: number, what = "request"): HttpReply {
  if (reply.status !== expected) throw new Error(`${what}: HTTP ${reply.status} (expected ${expected}): ${reply.body.toString("utf8").slice(0, 300)}`);
  return reply;
}

/** Benchmarks send traffic to 127.0.0.1 only. */
export function assertLoopback(url: string): void {
  const { hostname } = new URL(url);
  if (hostname !== "127.0.0.1") throw new Error(`refusing to send benchmark traffic to ${url}: only 127.0.0.1 is allowed`);
}
