import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65_535);

/**
 * The router's settings, from its container's environment: what its entry reads and what CDK must
 * set. The AWS region and credentials are the SDK's own, from the same environment.
 */
export const routerSettings = z.object({
  /** The image sets 0.0.0.0. */
  ROUTER_HOST: z.string().min(1).default("127.0.0.1"),
  /** 0: any free port. */
  ROUTER_PORT: port.default(8080),
  /** The cluster the browser tasks run in. */
  BROWSER_CLUSTER_ARN: z.string().min(1),
  /** The browser tasks' lease proxy port. */
  BROWSER_TASK_PORT: port.min(1).default(8080),
});
