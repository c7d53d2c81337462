import { loadConfig, type Config } from "./config.ts";
import { apiKeysCore } from "./domain/api-keys.ts";
import { connectionsCore } from "./domain/connections.ts";
import { profilesCore } from "./domain/profiles.ts";
import { connectionWorkflowCore } from "./domain/connection-workflow.ts";
import { createSfnClient, sfnWorkflowEngine } from "./workflow/engine.ts";
import { createS3Client, s3ArchiveStore } from "./archive/archive-store.ts";
import { dynamoApiKeyStore } from "./store/api-keys-store.ts";
import { dynamoConnectionStore } from "./store/connections-store.ts";
import { createDocumentClient } from "./store/dynamo.ts";
import { dynamoProfileStore } from "./store/profiles-store.ts";

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
    profiles: profilesCore({ profiles, connections, archives: s3ArchiveStore(s3, config.BUCKET_NAME) }),
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
