import * as z from "zod/mini";
import { maxValueCount, maxValueLength, valueKeyPattern } from "../domain/credential.ts";
import { nameMap, nameSchema, notReservedName, paginationQuery } from "./schemas.ts";

const valueKeyRule = "1 to 64 characters of letters, digits, '.', '_' or '-'";

const valueKey = z.string({ error: "must be a string" }).check(z.regex(valueKeyPattern, `must be ${valueKeyRule}`), notReservedName);

const values = nameMap(valueKey, z.string({ error: "must be a string" }).check(z.maxLength(maxValueLength, `must be at most ${maxValueLength} characters`)), {
  // Also the message for a key that breaks the rule.
  error: `must be an object mapping field names (${valueKeyRule}) to strings`,
}).check(z.refine((map) => Object.keys(map).length <= maxValueCount, `must hold at most ${maxValueCount} values`));

/** Checked as base32 by the core; the length bound keeps the item small. */
const totpSecret = z.string({ error: "must be a base32 string" }).check(z.maxLength(256, "must be at most 256 characters"));

const ssoProvider = z.nullable(
  z.string({ error: "must be a string or null" }).check(z.regex(/^[A-Za-z0-9._-]{0,64}$/, "must be a provider name of up to 64 letters, digits, '.', '_' or '-' (e.g. google)")),
);

const domain = z.string({ error: "must be a string" }).check(z.maxLength(253, "must be at most 253 characters"));

export const createCredentialBody = z.object({
  name: nameSchema,
  domain,
  values,
  totp_secret: z.optional(totpSecret),
  sso_provider: z.optional(ssoProvider),
});

export const updateCredentialBody = z.object({
  name: z.optional(nameSchema),
  values: z.optional(values),
  remove_value_keys: z.optional(z.array(valueKey, { error: "must be a list of field names" }).check(z.maxLength(maxValueCount, `must name at most ${maxValueCount} keys`))),
  totp_secret: z.optional(totpSecret),
  sso_provider: z.optional(ssoProvider),
});

export const listCredentialsQuery = z.object({
  domain: z.optional(domain),
  query: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
  ...paginationQuery,
});
