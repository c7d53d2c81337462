import type { Page } from "./list-page.ts";
import { findByIdOrName } from "./id-or-name.ts";

/**
 * A stored login. The values and the TOTP secret are kept sealed by the secret box (context
 * `{org, credential: id}`) and never leave the core except to a login flow; `value_keys` are kept
 * in clear so reads need no decryption.
 */
export interface Credential {
  id: string;
  name: string;
  domain: string;
  created_at: string;
  updated_at: string;
  sso_provider: string | null;
  /** Sorted. */
  value_keys: string[];
  /** The sealed JSON of the values map. */
  sealed_values: string;
  sealed_totp_secret: string | null;
  /** Bumped by every write, so a read-merge-write never overwrites a concurrent one. */
  version: number;
}

/** What a login flow needs to replay a credential. */
export interface CredentialForLogin {
  id: string;
  name: string;
  domain: string;
  values: Record<string, string>;
  totpSecret: string | null;
  ssoProvider: string | null;
}

/** The wire shape; `value_keys` only on single-credential answers, as the official client documents. */
export function toCredentialResource(credential: Credential, detail: "single" | "list" = "single") {
  return {
    id: credential.id,
    name: credential.name,
    domain: credential.domain,
    created_at: credential.created_at,
    updated_at: credential.updated_at,
    sso_provider: credential.sso_provider,
    has_values: credential.value_keys.length > 0,
    has_totp_secret: credential.sealed_totp_secret !== null,
    ...(detail === "single" ? { value_keys: credential.value_keys } : {}),
  };
}

export type CredentialUpdateOutcome = { outcome: "updated"; credential: Credential } | { outcome: "nameTaken" } | { outcome: "missing" };

export interface CredentialStore {
  /** False when the name is taken. */
  insert(org: string, credential: Credential): Promise<boolean>;
  get(org: string, id: string): Promise<Credential | undefined>;
  findByName(org: string, name: string): Promise<string | undefined>;
  list(request: { org: string; domain?: string; offset: number; limit: number; matches?: (credential: Credential) => boolean }): Promise<Page<Credential>>;
  /**
   * Writes `change(current)` over the credential, as long as no other write came between the
   * read and the write (`change` runs again on the fresh credential otherwise).
   */
  update(org: string, id: string, change: (current: Credential) => Promise<Credential>): Promise<CredentialUpdateOutcome>;
  /** The deleted credential; undefined when there was none. */
  remove(org: string, id: string): Promise<Credential | undefined>;
}

/** The credential `idOrName` names (an id when it has the shape of one and exists, otherwise a name), if any. */
export function findCredential(store: Pick<CredentialStore, "get" | "findByName">, org: string, idOrName: string): Promise<Credential | undefined> {
  return findByIdOrName(idOrName, "cr", { byId: (id) => store.get(org, id), idOfName: (name) => store.findByName(org, name) });
}

/** Field names in a credential's values: what the API accepts, and nothing else. */
export const valueKeyPattern = /^[A-Za-z0-9._-]{1,64}$/;
export const maxValueCount = 50;
export const maxValueLength = 4096;
