import * as z from "zod";
import { browserTelemetryCategories } from "../domain/connection.ts";
import { namePattern } from "../domain/profile.ts";

export const nameSchema = z
  .string()
  .regex(namePattern, "must be 1 to 255 characters of letters, digits, '.', '_' or '-'");

const integerParam = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be an integer from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .default(fallback);

export const paginationQuery = {
  limit: integerParam(1, 100, 20),
  offset: integerParam(0, Number.MAX_SAFE_INTEGER, 0),
};

export const idParams = z.object({ id: z.string().min(1).max(64) });

export const idOrNameParams = z.object({ id_or_name: z.string().min(1).max(255) });

const httpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http or https URL" })
  .max(2048, "must be at most 2048 characters");

const credentialSchema = z.union(
  [
    z.strictObject({ name: nameSchema }),
    z.strictObject({ provider: z.string().min(1).max(255), path: z.string().min(1).max(1024) }),
    z.strictObject({ provider: z.string().min(1).max(255), auto: z.literal(true) }),
  ],
  { error: "must be one of {name}, {provider, path} or {provider, auto: true}" },
);

const proxySchema = z.union([z.strictObject({ id: z.string().min(1).max(64) }), z.strictObject({ name: nameSchema })], {
  error: "must be {id} or {name}",
});

const categoryFlags = z.object(
  Object.fromEntries(browserTelemetryCategories.map((category) => [category, z.object({ enabled: z.boolean().optional() }).optional()])),
);

const browserTelemetrySchema = z.object({ enabled: z.boolean().optional(), browser: categoryFlags.optional() });

/** Fields a connection accepts on create and on update; update adds the ways to clear them. */
export const connectionSettingsBody = {
  allowed_domains: z.array(z.string().max(253)).max(50, "at most 50 allowed domains").optional(),
  health_checks: z.boolean().optional(),
  health_check_interval: z
    .number()
    .int("must be a whole number of seconds")
    .min(300, "must be at least 300 seconds")
    .max(86400, "must be at most 86400 seconds")
    .optional(),
  auto_reauth: z.boolean().optional(),
  save_credentials: z.boolean().optional(),
  record_session: z.boolean().optional(),
  browser_telemetry: browserTelemetrySchema.nullable().optional(),
};

export const createConnectionBody = z.object({
  domain: z.string().max(253, "must be at most 253 characters"),
  profile_name: nameSchema,
  login_url: httpUrl.optional(),
  credential: credentialSchema.optional(),
  proxy: proxySchema.optional(),
  ...connectionSettingsBody,
});

export const updateConnectionBody = z.object({
  login_url: z.union([z.literal(""), httpUrl]).optional(),
  credential: credentialSchema.nullable().optional(),
  proxy: proxySchema.nullable().optional(),
  ...connectionSettingsBody,
});
