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
