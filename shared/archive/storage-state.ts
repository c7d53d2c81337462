import * as z from "zod/mini";
import { InvalidArchiveError } from "#shared/archive/errors.ts";

const cookieSchema = z.looseObject({
  name: z.string(),
  value: z.string(),
  domain: z.string(),
  path: z.string(),
  /** Unix seconds; -1 marks a session cookie. */
  expires: z.number(),
  httpOnly: z.boolean(),
  secure: z.boolean(),
  sameSite: z.enum(["Strict", "Lax", "None"]),
});

const nameValueSchema = z.looseObject({ name: z.string(), value: z.string() });

/** One database as Playwright's `storageState({ indexedDB: true })` writes it; records keep Playwright's own encoding. */
const indexedDbSchema = z.looseObject({
  name: z.string(),
  version: z.number(),
  stores: z.array(z.looseObject({ name: z.string(), records: z.array(z.looseObject({})) })),
});

const originSchema = z.looseObject({
  origin: z.string(),
  localStorage: z.array(nameValueSchema),
  /** Playwright's IndexedDB snapshot; a context made with this state gets the databases back. */
  indexedDB: z.optional(z.array(indexedDbSchema)),
  /**
   * Ours, not Playwright's: the origin's sessionStorage, which no storageState carries and which
   * single-page apps (MSAL, for one) keep their login in. Restored by an init script per origin.
   */
  sessionStorage: z.optional(z.array(nameValueSchema)),
});

/** Playwright's storageState; unknown keys pass through so newer Playwright fields survive a round trip. */
export const storageStateSchema = z.looseObject({
  cookies: z.array(cookieSchema),
  origins: z.array(originSchema),
});

export type StorageState = z.infer<typeof storageStateSchema>;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses a storageState document. `label` names the document in error messages
 * (`storage_state.json: cookies[0].name: expected string`).
 */
export function parseStorageState(bytes: Uint8Array, label = "storage_state.json"): StorageState {
  let document: unknown;
  try {
    document = JSON.parse(utf8.decode(bytes));
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : "not valid UTF-8";
    throw new InvalidArchiveError(`${label}: not valid JSON: ${reason}`);
  }
  const parsed = storageStateSchema.safeParse(document, { error: describeIssue });
  if (parsed.success) return parsed.data;
  const [first, ...others] = parsed.error.issues.map((issue) => {
    const path = formatPath(issue.path);
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  const more = others.length > 0 ? ` (and ${others.length} more problems)` : "";
  throw new InvalidArchiveError(`${label}: ${first}${more}`);
}

/** Shorter than zod's defaults, so the message reads `cookies[0].name: expected string`. */
function describeIssue(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === "invalid_type") {
    return issue.input === undefined ? `missing, expected ${issue.expected}` : `expected ${issue.expected}`;
  }
  if (issue.code === "invalid_value") return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  return undefined;
}

function formatPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else text += text ? `.${String(key)}` : String(key);
  }
  return text;
}
