import { z } from "zod";

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
  /** How long a verified API key is trusted in-process before it is looked up again. */
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
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
