import * as z from "zod/mini";

/** `https://app.example.com`, or with a slash after it: scheme, host and port, nothing else. */
function isWebOrigin(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && url.href === `${url.origin}/`;
}

/** A comma-separated list of web origins, each spelled as browsers send it in `Origin`. */
const originList = z.pipe(
  z.pipe(
    z.string(),
    z.transform((value) => value.split(",").map((origin) => origin.trim()).filter((origin) => origin !== "")),
  ),
  z.array(
    z.pipe(
      z.string().check(z.refine(isWebOrigin, "must be comma-separated origins such as https://app.example.com (scheme, host and port only)")),
      z.transform((origin) => new URL(origin).origin),
    ),
  ),
);

const frameAncestorSource = /^(?:'self'|[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::(?:\d{1,5}|\*))?(?:\/[^\s;,']*)?)$/i;

/** `'none'` alone, or CSP sources separated by spaces: nothing that could end the directive or the header. */
function isFrameAncestorsList(value: string): boolean {
  const sources = value.trim().split(/ +/);
  if (sources.length === 1 && sources[0] === "'none'") return true;
  return sources.every((source) => frameAncestorSource.test(source));
}

const settingsSchema = z.object({
  /** `local` allows loopback and private login targets so the test sites on 127.0.0.1 work. */
  DEPLOYMENT_MODE: z._default(z.enum(["aws", "local"]), "aws"),
  /** The resources' names (see `resourceName`): set by the stack in AWS, defaulted to the stand-ins' locally. */
  TABLE_NAME: z.optional(z.string().check(z.minLength(3))),
  AWS_REGION: z._default(z.string().check(z.minLength(1)), "us-east-1"),
  /** Set only against a stand-in (DynamoDB Local); unset in AWS. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  BUCKET_NAME: z.optional(z.string().check(z.minLength(3))),
  /** Set only against a stand-in (s3rver); unset in AWS. */
  S3_ENDPOINT: z.optional(z.url()),
  STATE_MACHINE_ARN: z.optional(z.string().check(z.minLength(1))),
  /** Set only against the local Step Functions endpoint; unset in AWS. */
  SFN_ENDPOINT: z.optional(z.url()),
  /** Multiplies every workflow wait; 0.001 runs a 300 s interval in 0.3 s (local runs and tests). */
  LOCAL_TIME_SCALE: z._default(z.coerce.number().check(z.positive(), z.maximum(1)), 1),
  /**
   * An execution continues as a new one after this many loop iterations (9 history events each,
   * so 2000 stays well under Step Functions' 25,000) or this many days (the limit is 365).
   */
  WORKFLOW_MAX_ITERATIONS: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(2500)), 2000),
  WORKFLOW_MAX_AGE_DAYS: z._default(z.coerce.number().check(z.positive(), z.maximum(360)), 360),
  /** How long timeline events are kept. */
  TIMELINE_RETENTION_DAYS: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(3650)), 90),
  /** How long a verified API key is trusted in-process before it is looked up again. */
  API_KEY_CACHE_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(3600)), 60),
  /** Local mode: where each pooled Chromium keeps its profile, log and pid, so a restart finds leftovers. */
  BROWSER_DATA_DIR: z.optional(z.string().check(z.minLength(1))),
  /** Local mode: a Chromium to run instead of the one `@sparticuz/chromium` ships. */
  BROWSER_EXECUTABLE: z.optional(z.string().check(z.minLength(1))),
  /** AWS mode with pools: the ECS cluster the browser tasks run in. */
  BROWSER_CLUSTER_ARN: z.optional(z.string().check(z.regex(/^arn:aws[\w-]*:ecs:[\w-]+:\d{12}:cluster\/[\w-]+$/, "must be an ECS cluster ARN"))),
  /** AWS mode with pools: the browser task's definition. */
  BROWSER_TASK_DEFINITION_ARN: z.optional(
    z.string().check(z.regex(/^arn:aws[\w-]*:ecs:[\w-]+:\d{12}:task-definition\/[\w-]+:\d+$/, "must be an ECS task definition ARN with its revision")),
  ),
  /** AWS mode with pools: the subnets a browser task is placed in, comma-separated. */
  BROWSER_SUBNETS: z.optional(
    z.pipe(
      z.string().check(z.regex(/^\s*subnet-[0-9a-f]+(\s*,\s*subnet-[0-9a-f]+)*\s*$/, "must be comma-separated subnet ids such as subnet-0abc")),
      z.transform((value) => value.split(",").map((subnet) => subnet.trim())),
    ),
  ),
  /** AWS mode with pools: the security group of the browser tasks. */
  BROWSER_SECURITY_GROUP: z.optional(z.string().check(z.regex(/^sg-[0-9a-f]+$/, "must be a security group id such as sg-0abc"))),
  /** AWS mode with pools: the browser task's container, whose settings a launch overrides. */
  BROWSER_CONTAINER_NAME: z.optional(z.string().check(z.minLength(1))),
  /** AWS mode with pools: give each browser task a public IPv4 address, its way out to the web where no NAT gateway is. */
  BROWSER_ASSIGN_PUBLIC_IP: z._default(z.stringbool(), false),
  /** AWS mode with pools: the router's origin (`https://d123.cloudfront.net`), through which clients and pool functions reach browser tasks. */
  BROWSER_ROUTER_URL: z.optional(
    z.url({ protocol: /^https?$/, error: "must be an http or https URL" }).check(
      z.refine((value) => new URL(value).pathname === "/" && !/[?#]/.test(value), "must be an origin, without a path, query or fragment"),
    ),
  ),
  /** AWS mode with pools: the KMS HMAC key from which each browser task's admin secret is derived. */
  BROWSER_ADMIN_KEY_ID: z.optional(z.string().check(z.minLength(1))),
  /** Local mode: the file holding the key the secret box encrypts with (made on first use, mode 0600). */
  SECRETS_KEY_FILE: z.optional(z.string().check(z.minLength(1))),
  /** AWS mode: the KMS key (id or ARN) whose data keys the secret box encrypts with. */
  KMS_KEY_ID: z.optional(z.string().check(z.minLength(1))),
  /** Lifetime of the token a handoff code is exchanged for. */
  HANDOFF_TOKEN_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(60), z.maximum(3600)), 900),
  /** The events stream sends a heartbeat this often, so idle proxies keep it open. */
  SSE_HEARTBEAT_SECONDS: z._default(z.coerce.number().check(z.positive(), z.maximum(60)), 15),
  /** The events stream reads the connection this often to notice a change of flow state. */
  SSE_POLL_MILLISECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(50), z.maximum(5000)), 250),
  LOG_LEVEL: z._default(z.enum(["debug", "info", "warn", "error"]), "info"),
  /**
   * Where the service is reached from outside (`https://auth.example.com`, a path allowed), for the
   * `hosted_url` a login answers; unset, it is read from each request's host and stage.
   */
  PUBLIC_BASE_URL: z.optional(
    z.pipe(
      z.url({ protocol: /^https?$/, error: "must be an http or https URL" }).check(
        z.refine((value) => !/[?#]/.test(value), "must not hold a query or a fragment"),
      ),
      z.transform((value) => value.replace(/\/+$/, "")),
    ),
  ),
  /**
   * The origins the hosted login page may send the user back to (`success_url`, `error_url`).
   * Unset: none in AWS mode, any loopback origin in local mode.
   */
  REDIRECT_ORIGINS: z.optional(originList),
  /**
   * The origins whose pages may call the handoff-token routes (exchange, get, submit, events) from
   * the browser (CORS), or `*` for any; the API-key routes answer no CORS at all.
   */
  ALLOWED_ORIGINS: z._default(z.union([z.literal("*"), originList]), "*"),
  /** The CSP `frame-ancestors` sources of the hosted login page: who may embed it in a frame. */
  FRAME_ANCESTORS: z._default(
    z.string().check(z.refine(isFrameAncestorsList, "must be 'none' or space-separated CSP sources such as 'self' https://app.example.com")),
    "'none'",
  ),
});

type Settings = z.infer<typeof settingsSchema>;

/** The AWS resources every deployment points its functions at, by the variable naming each. */
export type ResourceName = "TABLE_NAME" | "BUCKET_NAME" | "STATE_MACHINE_ARN";

const resourceMeanings: Record<ResourceName, string> = {
  TABLE_NAME: "the DynamoDB table's name",
  BUCKET_NAME: "the archive bucket's name",
  STATE_MACHINE_ARN: "the connection workflow's state machine ARN",
};

/** What `npm start` creates and the local Step Functions endpoint serves. */
const localResourceNames: Record<ResourceName, string> = {
  TABLE_NAME: "auth-connections",
  BUCKET_NAME: "auth-connection-profiles",
  STATE_MACHINE_ARN: "arn:aws:states:us-east-1:000000000000:stateMachine:connection-workflow",
};

/** Local mode: the stand-ins, each resource named (by default, as `npm start` names them). */
export type LocalConfig = Omit<Settings, "DEPLOYMENT_MODE" | ResourceName> & { DEPLOYMENT_MODE: "local" } & Record<ResourceName, string>;

/**
 * AWS mode: no default names a resource, as a default would name one of no deployment's (or
 * another's); `resourceName` refuses a missing one when the process first builds what uses it.
 */
export type AwsConfig = Omit<Settings, "DEPLOYMENT_MODE"> & { DEPLOYMENT_MODE: "aws" };

export type Config = LocalConfig | AwsConfig;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`invalid configuration: ${problems.join("; ")}`);
  }
  const settings = parsed.data;
  if (settings.DEPLOYMENT_MODE === "aws") return { ...settings, DEPLOYMENT_MODE: "aws" };
  return {
    ...settings,
    DEPLOYMENT_MODE: "local",
    TABLE_NAME: settings.TABLE_NAME ?? localResourceNames.TABLE_NAME,
    BUCKET_NAME: settings.BUCKET_NAME ?? localResourceNames.BUCKET_NAME,
    STATE_MACHINE_ARN: settings.STATE_MACHINE_ARN ?? localResourceNames.STATE_MACHINE_ARN,
  };
}

/**
 * The name of the resource `name` points at. In AWS mode a missing one is a start-up error naming
 * the variable: the composition asks for it as it first builds the client or store that uses it,
 * so a function fails before its first call to AWS, and one that uses none (the hosted page) runs.
 */
export function resourceName(config: Config, name: ResourceName): string {
  const value = config[name];
  if (value === undefined) {
    throw new Error(`invalid configuration: ${name} is not set; in AWS mode (DEPLOYMENT_MODE=aws) the stack sets ${resourceMeanings[name]}`);
  }
  return value;
}
