import { ECSClient } from "@aws-sdk/client-ecs";
import { KMSClient } from "@aws-sdk/client-kms";
import { ecsBrowsers } from "../browsers/ecs-tasks.ts";
import { unavailableBrowsers, type BrowserProvider } from "../domain/browser-provider.ts";
import { kmsTaskAdminSecrets } from "../browsers/task-admin-secrets.ts";
import type { Config } from "../config.ts";
import { perConfig } from "./config.ts";
import { outagesAsServiceUnavailable, sdkClientSettings } from "./sdk-settings.ts";

/** A stack deployed without pools gives its functions no browser settings: acquire answers 503. */
export const noAwsBrowsers =
  "this deployment runs no pooled browsers: it was deployed without pools (deploy with `npx cdk deploy -c POOLS=true`, which needs Docker); " +
  "pools can be created, listed, updated and deleted, and acquire works on a local deployment (npm start)";

let localProvider: ((config: Config) => BrowserProvider) | undefined;

/**
 * The local runtime plugs its Chromium provider in here rather than this module importing it, so
 * no Lambda bundle carries local Chromium and the Chromium download code it loads.
 */
export function provideLocalBrowsers(make: (config: Config) => BrowserProvider): void {
  localProvider = make;
}

const awsBrowserSettings = [
  "BROWSER_CLUSTER_ARN",
  "BROWSER_TASK_DEFINITION_ARN",
  "BROWSER_SUBNETS",
  "BROWSER_SECURITY_GROUP",
  "BROWSER_CONTAINER_NAME",
  "BROWSER_ROUTER_URL",
  "BROWSER_ADMIN_KEY_ID",
] as const satisfies readonly (keyof Config)[];

/** Browsers as ECS Fargate tasks, where the stack was deployed with pools and so set every BROWSER_* setting. */
function awsBrowsers(config: Config): BrowserProvider {
  const missing = awsBrowserSettings.filter((name) => config[name] === undefined);
  if (missing.length === awsBrowserSettings.length) return unavailableBrowsers(noAwsBrowsers);
  if (missing.length > 0) return unavailableBrowsers(`this deployment's browser settings are incomplete: ${missing.join(", ")} not set`);
  const { BROWSER_CLUSTER_ARN, BROWSER_TASK_DEFINITION_ARN, BROWSER_SUBNETS, BROWSER_SECURITY_GROUP, BROWSER_CONTAINER_NAME, BROWSER_ROUTER_URL, BROWSER_ADMIN_KEY_ID } =
    config as Required<Pick<Config, (typeof awsBrowserSettings)[number]>>;
  const ecs = new ECSClient(sdkClientSettings(config, undefined));
  const kms = new KMSClient(sdkClientSettings(config, undefined));
  outagesAsServiceUnavailable(ecs);
  outagesAsServiceUnavailable(kms);
  return ecsBrowsers({
    ecs,
    cluster: BROWSER_CLUSTER_ARN,
    taskDefinition: BROWSER_TASK_DEFINITION_ARN,
    subnets: BROWSER_SUBNETS,
    securityGroups: [BROWSER_SECURITY_GROUP],
    assignPublicIp: config.BROWSER_ASSIGN_PUBLIC_IP,
    containerName: BROWSER_CONTAINER_NAME,
    routerUrl: BROWSER_ROUTER_URL,
    adminSecret: kmsTaskAdminSecrets(kms, BROWSER_ADMIN_KEY_ID),
  });
}

export const browsers = perConfig((config) => {
  if (config.DEPLOYMENT_MODE === "aws") return awsBrowsers(config);
  if (!localProvider) throw new Error("local mode runs browsers through the local runtime's provider (infra/local/stack.ts)");
  return localProvider(config);
});
