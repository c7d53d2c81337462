/**
 * The browser-task router's entry: the router's container runs it from the browser task's image.
 * Its settings (settings.ts) come from the environment, read once here.
 */
import type { AddressInfo } from "node:net";
import { ECSClient } from "@aws-sdk/client-ecs";
import { z } from "zod";
import { serviceTimeouts } from "../../aws-timeouts.ts";
import { log } from "../../log.ts";
import { ecsTaskResolver } from "./ecs-task-resolver.ts";
import { routerSettings } from "./settings.ts";
import { taskRouter } from "./task-router.ts";

const parsed = routerSettings.safeParse(process.env);
if (!parsed.success) {
  process.stderr.write(`router: bad settings\n${z.prettifyError(parsed.error)}\n`);
  process.exit(2);
}
const settings = parsed.data;

const ecs = new ECSClient({ requestHandler: serviceTimeouts });
const stopping = new AbortController();
process.once("SIGTERM", () => stopping.abort());
process.once("SIGINT", () => stopping.abort());

const server = taskRouter({
  resolveTask: ecsTaskResolver({ ecs, cluster: settings.BROWSER_CLUSTER_ARN, taskPort: settings.BROWSER_TASK_PORT }),
  signal: stopping.signal,
});
// The abort closes the server too; it closes once its last connection has ended.
server.once("close", () => ecs.destroy());
server.listen({ host: settings.ROUTER_HOST, port: settings.ROUTER_PORT, signal: stopping.signal }, () => {
  log.info("router listening", { host: settings.ROUTER_HOST, port: (server.address() as AddressInfo).port });
});
