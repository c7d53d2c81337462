import * as z from "zod";

const configSchema = z.object({
  /** `local` allows loopback and private login targets so the test sites on 127.0.0.1 work. */
  DEPLOYMENT_MODE: z.enum(["aws", "local"]).default("aws"),
  TABLE_NAME: z.string().min(3).default("auth-connections"),
  AWS_REGION: z.string().min(1).default("us-east-1"),
  /** Set only against a stand-in (DynamoDB Local); unset in AWS. */
  DYNAMODB_ENDPOINT: z.url().optional(),
  BUCKET_NAME: z.string().min(3).default("auth-connection-profiles"),
  /** Set only against a stand-in (s3rver); unset in AWS. */
  S3_ENDPOINT: z.url().optional(),
  STATE_MACHINE_ARN: z.string().min(1).default("arn:aws:states:us-east-1:000000000000:stateMachine:connection-workflow"),
  /** Set only against the local Step Functions endpoint; unset in AWS. */
  SFN_ENDPOINT: z.url().optional(),
  /** Multiplies every workflow wait; 0.001 runs a 300 s interval in 0.3 s (local runs and tests). */
  LOCAL_TIME_SCALE: z.coerce.number().positive().max(1).default(1),
  /**
   * An execution continues as a new one after this many loop iterations (9 history events each,
   * so 2000 stays well under Step Functions' 25,000) or this many days (the limit is 365).
   */
  WORKFLOW_MAX_ITERATIONS: z.coerce.number().int().min(1).max(2500).default(2000),
  WORKFLOW_MAX_AGE_DAYS: z.coerce.number().positive().max(360).default(360),
  /** How long timeline events are kept. */
  TIMELINE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** How long a verified API key is trusted in-process before it is looked up again. */
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  /** Local mode: where each pooled Chromium keeps its profile, log and pid, so a restart finds leftovers. */
  BROWSER_DATA_DIR: z.string().min(1).optional(),
  /** Local mode: a Chromium to run instead of the one `@sparticuz/chromium` ships. */
  BROWSER_EXECUTABLE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`invalid configuration: ${problems.join("; ")}`);
  }
  return parsed.data;
}
