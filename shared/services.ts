import { tmpdir } from "node:os";
import { join } from "node:path";
import { localChromium } from "./browsers/local-chromium.ts";
import { unavailableBrowsers, type BrowserProvider } from "./browsers/provider.ts";
import { loadConfig, type Config } from "./config.ts";
import { apiKeysCore } from "./domain/api-keys.ts";
import { connectionsCore } from "./domain/connections.ts";
import { poolFiller } from "./domain/pool-filler.ts";
import { poolsCore } from "./domain/pools.ts";
import { profilesCore } from "./domain/profiles.ts";
import { connectionWorkflowCore } from "./domain/connection-workflow.ts";
import { createSfnClient, sfnWorkflowEngine } from "./workflow/engine.ts";
import { createS3Client, s3ArchiveStore } from "./archive/archive-store.ts";
import { dynamoApiKeyStore } from "./store/api-keys-store.ts";
import { dynamoConnectionStore } from "./store/connections-store.ts";
import { createDocumentClient } from "./store/dynamo.ts";
import { dynamoPoolStore } from "./store/pools-store.ts";
import { dynamoProfileStore } from "./store/profiles-store.ts";

/** AWS has no browser provider yet (container tasks are to come): pool records work, acquire answers 503. */
export const noAwsBrowsers =
  "this deployment cannot run pooled browsers yet: the AWS browser provider (browsers as container tasks) is not built; " +
  "pools can be created, listed, updated and deleted, and acquire works on a local deployment (npm start)";

function browserProvider(config: Config): BrowserProvider {
  if (config.DEPLOYMENT_MODE === "aws") return unavailableBrowsers(noAwsBrowsers);
  return localChromium({ root: config.BROWSER_DATA_DIR ?? join(tmpdir(), "auth-connection-browsers"), executable: config.BROWSER_EXECUTABLE });
}

/** The composition root: AWS clients are built once per process from the validated config. */
export function buildServices(config: Config) {
  const db = createDocumentClient({ region: config.AWS_REGION, endpoint: config.DYNAMODB_ENDPOINT });
  const s3 = createS3Client({ region: config.AWS_REGION, endpoint: config.S3_ENDPOINT });
  const profiles = dynamoProfileStore(db, config.TABLE_NAME);
  const connections = dynamoConnectionStore(db, config.TABLE_NAME);
  const engine = sfnWorkflowEngine(createSfnClient({ region: config.AWS_REGION, endpoint: config.SFN_ENDPOINT }), config.STATE_MACHINE_ARN);
  const timing = {
    timeScale: config.LOCAL_TIME_SCALE,
    maxIterations: config.WORKFLOW_MAX_ITERATIONS,
    maxAgeDays: config.WORKFLOW_MAX_AGE_DAYS,
  };
  const pools = dynamoPoolStore(db, config.TABLE_NAME);
  const browsers = browserProvider(config);
  const profilesApi = profilesCore({ profiles, connections, archives: s3ArchiveStore(s3, config.BUCKET_NAME) });
  return {
    config,
    db,
    s3,
    connectionStore: connections,
    connections: connectionsCore({
      connections,
      profiles,
      workflow: engine,
      timing,
      policy: { allowPrivateTargets: config.DEPLOYMENT_MODE === "local" },
    }),
    workflow: connectionWorkflowCore({
      connections,
      engine,
      timing,
      timelineRetentionDays: config.TIMELINE_RETENTION_DAYS,
    }),
    profiles: profilesApi,
    pools: poolsCore({
      pools,
      browsers,
      resolveProfile: async (org, ref) => (await profilesApi.resolve(org, ref.id || ref.name || "")).id,
    }),
    poolFiller: poolFiller({ pools, browsers }),
    apiKeys: apiKeysCore({ store: dynamoApiKeyStore(db, config.TABLE_NAME), cacheSeconds: config.API_KEY_CACHE_SECONDS }),
  };
}

export type Services = ReturnType<typeof buildServices>;

let processServices: Services | undefined;

/** Built on first use (a Lambda cold start, or the local gateway's first request), then reused. */
export function services(): Services {
  processServices ??= buildServices(loadConfig());
  return processServices;
}
