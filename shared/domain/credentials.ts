import { newId } from "../ids.ts";
import { base32Decode, InvalidTotpSecretError, totpCode, totpWindowEndsAt } from "../secrets/totp.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import { findCredential, toCredentialResource, type Credential, type CredentialForLogin, type CredentialStore } from "./credential.ts";
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from "./errors.ts";
import type { ConnectionStore } from "./connection.ts";
import { credentialChanged } from "./reauth.ts";
import type { TargetPolicy } from "../policy/scope.ts";
import { normalizeDomain } from "./target-fields.ts";

export interface CredentialsCoreDeps {
  credentials: CredentialStore;
  /** A changed credential lets the connections whose re-auth it stopped try again. */
  connections: Pick<ConnectionStore, "list" | "guardedUpdate">;
  box: SecretBox;
  policy: TargetPolicy;
  now?: () => Date;
}

export interface CreateCredentialInput {
  name: string;
  domain: string;
  values: Record<string, string>;
  /** Base32; "" sets none. */
  totp_secret?: string;
  /** "" or null sets none. */
  sso_provider?: string | null;
}

export interface UpdateCredentialInput {
  name?: string;
  /** Merged into the stored values, after `remove_value_keys` are removed. */
  values?: Record<string, string>;
  remove_value_keys?: string[];
  /** Base32; "" removes it. */
  totp_secret?: string;
  /** "" or null removes it. */
  sso_provider?: string | null;
}

interface ValuesChange {
  remove?: string[];
  merge?: Record<string, string>;
}

/** 80 bits: the shortest secret authenticator apps are commonly given. */
const minTotpSecretBytes = 10;
/** A lost race costs one pass of saveFromLogin (a create beaten by another, or a credential deleted meanwhile). */
const maxSavePasses = 4;

type CredentialRecordsDeps = Pick<CredentialsCoreDeps, "credentials" | "policy">;

function credentialLookup(deps: CredentialRecordsDeps) {
  const find = (org: string, idOrName: string) => findCredential(deps.credentials, org, idOrName);

  /** `{id_or_name}`: an id when it has the shape of one and exists, otherwise a name. */
  async function resolve(org: string, idOrName: string): Promise<Credential> {
    const credential = await find(org, idOrName);
    if (!credential) throw new NotFoundError(`credential '${idOrName}' not found`);
    return credential;
  }

  return { find, resolve };
}

/**
 * The credential routes that never open a sealed value (get, list, delete): they need no secret
 * box, so their functions carry no KMS client.
 */
export function credentialRecordsCore(deps: CredentialRecordsDeps) {
  const { resolve } = credentialLookup(deps);

  return {
    async get(org: string, idOrName: string) {
      return toCredentialResource(await resolve(org, idOrName));
    },

    async list(org: string, input: { domain?: string; query?: string; limit: number; offset: number }) {
      const query = input.query;
      const page = await deps.credentials.list({
        org,
        domain: input.domain === undefined ? undefined : normalizeDomain(input.domain, "domain", deps.policy),
        offset: input.offset,
        limit: input.limit,
        matches: query ? (credential) => matchesQuery(credential, query) : undefined,
      });
      return { items: page.items.map((credential) => toCredentialResource(credential, "list")), hasMore: page.hasMore };
    },

    async remove(org: string, idOrName: string) {
      const credential = await resolve(org, idOrName);
      if (!(await deps.credentials.remove(org, credential.id))) throw new NotFoundError(`credential '${idOrName}' not found`);
    },
  };
}

/**
 * Credentials: the API's CRUD and TOTP codes, and what login flows need (`forLogin`,
 * `saveFromLogin`). Values and TOTP secrets are sealed with the context `{org, credential: id}`
 * and only `forLogin` ever returns them.
 */
export function credentialsCore(deps: CredentialsCoreDeps) {
  const clock = deps.now ?? (() => new Date());
  const sealContext = (org: string, id: string) => ({ org, credential: id });
  const { find, resolve } = credentialLookup(deps);

  async function nameConflict(org: string, name: string): Promise<never> {
    throw new ConflictError(`a credential named '${name}' already exists`, await deps.credentials.findByName(org, name));
  }

  async function openValues(org: string, credential: Credential): Promise<Record<string, string>> {
    return JSON.parse(await deps.box.open(credential.sealed_values, sealContext(org, credential.id))) as Record<string, string>;
  }

  /** How `values` are stored: the sorted keys in clear, the map sealed. */
  async function sealedValues(org: string, id: string, values: Record<string, string>) {
    const sorted = Object.fromEntries(Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { value_keys: Object.keys(sorted), sealed_values: await deps.box.seal(JSON.stringify(sorted), sealContext(org, id)) };
  }

  async function changeValues(org: string, credential: Credential, change: ValuesChange) {
    const removed = new Set(change.remove ?? []);
    const kept = Object.entries(await openValues(org, credential)).filter(([key]) => !removed.has(key));
    return sealedValues(org, credential.id, Object.fromEntries([...kept, ...Object.entries(change.merge ?? {})]));
  }

  async function newCredential(
    org: string,
    input: { name: string; domain: string; values: Record<string, string>; totpSecret: string | null; ssoProvider: string | null },
  ): Promise<Credential> {
    const id = newId("cr");
    const createdAt = clock().toISOString();
    return {
      id,
      name: input.name,
      domain: input.domain,
      created_at: createdAt,
      updated_at: createdAt,
      sso_provider: input.ssoProvider,
      ...(await sealedValues(org, id, input.values)),
      sealed_totp_secret: input.totpSecret ? await deps.box.seal(input.totpSecret, sealContext(org, id)) : null,
      version: 1,
    };
  }

  /** A create or update that just set a TOTP secret answers with the current code, as the official client documents. */
  function withTotpCode(resource: ReturnType<typeof toCredentialResource>, totpSecret: string | null) {
    if (!totpSecret) return resource;
    const at = clock();
    return { ...resource, totp_code: totpCode(totpSecret, at), totp_code_expires_at: totpWindowEndsAt(at).toISOString() };
  }

  return {
    async create(org: string, input: CreateCredentialInput) {
      const totpSecret = input.totp_secret ? normalizeTotpSecret(input.totp_secret) : null;
      const credential = await newCredential(org, {
        name: input.name,
        domain: normalizeDomain(input.domain, "domain", deps.policy),
        values: input.values,
        totpSecret,
        ssoProvider: normalizeSsoProvider(input.sso_provider),
      });
      if (!(await deps.credentials.insert(org, credential))) await nameConflict(org, credential.name);
      return withTotpCode(toCredentialResource(credential), totpSecret);
    },

    ...credentialRecordsCore(deps),

    async update(org: string, idOrName: string, input: UpdateCredentialInput) {
      const credential = await resolve(org, idOrName);
      if (Object.values(input).every((field) => field === undefined)) return toCredentialResource(credential);
      const totpSecret = input.totp_secret ? normalizeTotpSecret(input.totp_secret) : null;
      const changingValues = input.values !== undefined || input.remove_value_keys !== undefined;
      const result = await deps.credentials.update(org, credential.id, async (current) => ({
        ...current,
        updated_at: clock().toISOString(),
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.sso_provider !== undefined ? { sso_provider: normalizeSsoProvider(input.sso_provider) } : {}),
        ...(changingValues ? await changeValues(org, current, { remove: input.remove_value_keys, merge: input.values }) : {}),
        ...(input.totp_secret !== undefined
          ? { sealed_totp_secret: totpSecret ? await deps.box.seal(totpSecret, sealContext(org, current.id)) : null }
          : {}),
      }));
      if (result.outcome === "missing") throw new NotFoundError(`credential '${idOrName}' not found`);
      if (result.outcome === "nameTaken") return nameConflict(org, input.name as string);
      if (changingValues || input.totp_secret !== undefined || input.sso_provider !== undefined) await credentialChanged(deps.connections, org, credential.id);
      return withTotpCode(toCredentialResource(result.credential), totpSecret);
    },

    async totpCode(org: string, idOrName: string) {
      const credential = await resolve(org, idOrName);
      if (!credential.sealed_totp_secret) throw new BadRequestError(`credential '${idOrName}' has no totp_secret: set one with an update first`);
      const secret = await deps.box.open(credential.sealed_totp_secret, sealContext(org, credential.id));
      const at = clock();
      return { code: totpCode(secret, at), expires_at: totpWindowEndsAt(at).toISOString() };
    },

    /** The credential a login flow replays, opened; undefined when the org has none by that name (or id). */
    async forLogin(org: string, name: string): Promise<CredentialForLogin | undefined> {
      const credential = await find(org, name);
      if (!credential) return undefined;
      return {
        id: credential.id,
        name: credential.name,
        domain: credential.domain,
        values: await openValues(org, credential),
        totpSecret: credential.sealed_totp_secret && (await deps.box.open(credential.sealed_totp_secret, sealContext(org, credential.id))),
        ssoProvider: credential.sso_provider,
      };
    },

    /**
     * Keeps the durable values of a successful login, typed on a site of `domain`: creates the
     * credential `name` when the org has none, otherwise merges the values into it, but only into a
     * credential of that same domain (undefined when the name belongs to another domain's: nothing
     * is written). Concurrent saves each land: a create that loses the name race merges into the
     * winner, and merges are version-guarded. `ssoProvider`, when given, is the identity provider the
     * values were typed at: the credential signs in through it.
     */
    async saveFromLogin(
      org: string,
      input: { name: string; domain: string; values: Record<string, string>; ssoProvider?: string | null },
    ): Promise<{ id: string; name: string; hasTotpSecret: boolean } | undefined> {
      for (let pass = 1; pass <= maxSavePasses; pass++) {
        const existingId = await deps.credentials.findByName(org, input.name);
        if (existingId) {
          const existing = await deps.credentials.get(org, existingId);
          if (!existing) continue;
          // A credential's domain never changes, so one look before the merge settles it.
          if (existing.domain !== input.domain) return undefined;
          const result = await deps.credentials.update(org, existingId, async (current) => ({
            ...current,
            updated_at: clock().toISOString(),
            ...(await changeValues(org, current, { merge: input.values })),
            ...(input.ssoProvider ? { sso_provider: normalizeSsoProvider(input.ssoProvider) } : {}),
          }));
          if (result.outcome === "updated") {
            return { id: existingId, name: result.credential.name, hasTotpSecret: Boolean(result.credential.sealed_totp_secret) };
          }
        } else {
          const credential = await newCredential(org, { ...input, totpSecret: null, ssoProvider: normalizeSsoProvider(input.ssoProvider) });
          if (await deps.credentials.insert(org, credential)) return { id: credential.id, name: credential.name, hasTotpSecret: false };
        }
      }
      throw new ServiceUnavailableError(`credential '${input.name}' kept changing while a login saved to it; retry`);
    },
  };
}

/** Base32 as authenticator set-up pages show it: case, spaces, dashes and padding do not matter. */
function normalizeTotpSecret(raw: string): string {
  const fail = (why: string): never => {
    throw new BadRequestError(`totp_secret: ${why}`, [{ code: "totp_secret", message: why }]);
  };
  const secret = raw.replace(/[\s=-]/g, "").toUpperCase();
  let bytes: Buffer;
  try {
    bytes = base32Decode(secret);
  } catch (error) {
    if (error instanceof InvalidTotpSecretError) return fail(error.message);
    throw error;
  }
  if (bytes.length < minTotpSecretBytes) fail(`must hold at least ${minTotpSecretBytes * 8} bits (16 base32 characters)`);
  return secret;
}

function normalizeSsoProvider(raw: string | null | undefined): string | null {
  return raw ? raw.toLowerCase() : null;
}

function matchesQuery(credential: Credential, query: string): boolean {
  const needle = query.toLowerCase();
  return credential.id === query || credential.name.toLowerCase().includes(needle) || credential.domain.includes(needle);
}
