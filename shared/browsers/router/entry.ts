/**
 * The browser-task router's entry: the router's container runs it from the browser task's image.
 *
 * Settings come from the environment, read once here: ROUTER_HOST (127.0.0.1 unless set; the image
 * sets 0.0.0.0), ROUTER_PORT (8080 unless set; 0: any free port), BROWSER_CLUSTER_ARN (the cluster
 * the browser tasks run in) and BROWSER_TASK_PORT (their lease proxy's port, 8080 unless set). The
 * AWS region and credentials are the SDK's own, from the container's environment.
 */
import type { AddressInfo } from "node:net";
import { ECSClient } from "@aws-sdk/client-ecs";
import { z } from "zod";
import { log } from "../../log.ts";
import { ecsTaskResolver } from "./ecs-task-resolver.ts";
import { taskRouter } from "./task-router.ts";

const port = z.coerce.number().int().min(0).max(65_535);
const settingsSchema = z.object({
  ROUTER_HOST: z.string().min(1).default("127.0.0.1"),
  ROUTER_PORT: port.default(8080),
  BROWSER_CLUSTER_ARN: z.string().min(1),
  BROWSER_TASK_PORT: port.min(1).default(8080),
});

const parsed = settingsSchema.safeParse(process.env);
if (!parsed.success) {
  process.stderr.write(`router: bad settings\n${z.prettifyError(parsed.error)}\n`);
  process.exit(2);
}
const settings = parsed.data;

const ecs = new ECSClient({});
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
