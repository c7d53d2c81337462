// zod/mini: the same parser as zod with functions instead of methods, so a bundle holds only the
// checks it uses (sizes in docs/performance.md).
import * as z from "zod/mini";
import { browserTelemetryCategories } from "../domain/connection.ts";
import { isOnlyDots, namePattern, onlyDotsProblem } from "../domain/profile.ts";

export const nameSchema = z
  .string()
  .check(
    z.regex(namePattern, "must be 1 to 255 characters of letters, digits, '.', '_' or '-'"),
    z.refine((name) => !isOnlyDots(name), onlyDotsProblem),
  );

/**
 * Names every JavaScript object answers to already: as a key, `__proto__` is dropped by a record
 * without a word (value and all, whatever its type), and the others shadow what every object has.
 */
export const reservedNames: readonly string[] = ["__proto__", "constructor", "prototype"];

const reservedNameProblem = (name: string) => `'${name}' is a reserved name (${reservedNames.join(", ")} are refused)`;

/** Refuses a reserved name, for a schema of one name. */
export const notReservedName = z.superRefine((name: string, context) => {
  if (reservedNames.includes(name)) context.addIssue({ code: "custom", input: name, message: reservedNameProblem(name) });
});

/**
 * A body's map of names to values (`values`, `field_values`): a record of `key` to `value` that first
 * refuses a reserved name, since `JSON.parse` makes `__proto__` an own key that the record would skip
 * unchecked.
 */
export function nameMap<K extends z.core.$ZodRecordKey, V extends z.core.SomeType>(key: K, value: V, params?: Parameters<typeof z.record>[2]) {
  return z.pipe(
    z.unknown().check(
      z.superRefine((input, context) => {
        if (typeof input !== "object" || input === null) return;
        for (const name of Object.keys(input)) {
          if (reservedNames.includes(name)) context.addIssue({ code: "custom", path: [name], input, message: reservedNameProblem(name) });
        }
      }),
    ),
    z.record(key, value, params),
  );
}

const integerParam = (min: number, max: number, fallback: number) =>
  z._default(
    z.pipe(
      z.pipe(z.string().check(z.regex(/^\d+$/, `must be an integer from ${min} to ${max}`)), z.transform(Number)),
      z.number().check(z.int(), z.minimum(min, `must be at least ${min}`), z.maximum(max, `must be at most ${max}`)),
    ),
    fallback,
  );

export const paginationQuery = {
  limit: integerParam(1, 100, 20),
  offset: integerParam(0, Number.MAX_SAFE_INTEGER, 0),
};

export const idParams = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });

export const idOrNameParams = z.object({ id_or_name: z.string().check(z.minLength(1), z.maxLength(255)) });

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http or https URL" }).check(z.maxLength(2048, "must be at most 2048 characters"));

const credentialSchema = z.union(
  [
    z.strictObject({ name: nameSchema }),
    z.strictObject({ provider: z.string().check(z.minLength(1), z.maxLength(255)), path: z.string().check(z.minLength(1), z.maxLength(1024)) }),
    z.strictObject({ provider: z.string().check(z.minLength(1), z.maxLength(255)), auto: z.literal(true) }),
  ],
  { error: "must be one of {name}, {provider, path} or {provider, auto: true}" },
);

const proxySchema = z.union([z.strictObject({ id: z.string().check(z.minLength(1), z.maxLength(64)) }), z.strictObject({ name: nameSchema })], {
  error: "must be {id} or {name}",
});

const categoryFlags = z.object(
  Object.fromEntries(browserTelemetryCategories.map((category) => [category, z.optional(z.object({ enabled: z.optional(z.boolean()) }))])),
);

const browserTelemetrySchema = z.object({ enabled: z.optional(z.boolean()), browser: z.optional(categoryFlags) });

/** Fields a connection accepts on create and on update; update adds the ways to clear them. */
export const connectionSettingsBody = {
  allowed_domains: z.optional(z.array(z.string().check(z.maxLength(253))).check(z.maxLength(50, "at most 50 allowed domains"))),
  health_checks: z.optional(z.boolean()),
  health_check_interval: z.optional(
    z
      .number()
      .check(
        z.int("must be a whole number of seconds"),
        z.minimum(300, "must be at least 300 seconds"),
        z.maximum(86400, "must be at most 86400 seconds"),
      ),
  ),
  auto_reauth: z.optional(z.boolean()),
  save_credentials: z.optional(z.boolean()),
  record_session: z.optional(z.boolean()),
  browser_telemetry: z.optional(z.nullable(browserTelemetrySchema)),
};

export const createConnectionBody = z.object({
  domain: z.string().check(z.maxLength(253, "must be at most 253 characters")),
  profile_name: nameSchema,
  login_url: z.optional(httpUrl),
  credential: z.optional(credentialSchema),
  proxy: z.optional(proxySchema),
  ...connectionSettingsBody,
});

export const updateConnectionBody = z.object({
  login_url: z.optional(z.union([z.literal(""), httpUrl])),
  credential: z.optional(z.nullable(credentialSchema)),
  proxy: z.optional(z.nullable(proxySchema)),
  ...connectionSettingsBody,
});

/** The login body: the overrides a browser engine would use; the HTTP engine accepts and ignores them. */
export const loginBody = z.object({
  proxy: z.optional(proxySchema),
  record_session: z.optional(z.boolean()),
  browser_telemetry: z.optional(z.nullable(browserTelemetrySchema)),
});

const submittedValue = z.string().check(z.maxLength(4096, "must be at most 4096 characters"));
const valueMap = nameMap(z.string().check(z.minLength(1), z.maxLength(255)), submittedValue);
const selector = z.optional(z.string().check(z.minLength(1), z.maxLength(1024)));

export const submitBody = z.object({
  field_values: z.optional(valueMap),
  fields: z.optional(valueMap),
  selected_choice_id: selector,
  mfa_option_id: selector,
  sign_in_option_id: selector,
  sso_button_selector: selector,
  sso_provider: selector,
});
