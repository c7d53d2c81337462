import { createHash, randomBytes } from "node:crypto";
import { BadRequestError } from "./errors.ts";
import { namePattern } from "./profile.ts";

export interface ApiKeyRecord {
  key_hash: string;
  org: string;
  created_at: string;
}

export interface ApiKeyStore {
  put(record: ApiKeyRecord): Promise<void>;
  findOrg(keyHash: string): Promise<string | undefined>;
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The credential of an `Authorization: Bearer <credential>` header, or undefined for any other header. */
export function bearerCredential(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
}

export function generateApiKey(): string {
  return `ak_${randomBytes(24).toString("base64url")}`;
}

export function apiKeysCore(deps: { store: ApiKeyStore; cacheSeconds: number; now?: () => number }) {
  const now = deps.now ?? Date.now;
  // Plays the part of API Gateway's authorizer cache: a verified key is trusted this long per process.
  const verified = new Map<string, { org: string; until: number }>();

  async function register(org: string, key: string): Promise<void> {
    if (!namePattern.test(org)) {
      throw new BadRequestError(`org: '${org}' must be 1 to 255 letters, digits, '.', '_' or '-'`);
    }
    await deps.store.put({ key_hash: hashApiKey(key), org, created_at: new Date(now()).toISOString() });
  }

  return {
    register,

    async mint(org: string): Promise<string> {
      const key = generateApiKey();
      await register(org, key);
      return key;
    },

    /** The org of a `Bearer <key>` header, or undefined for a missing, malformed or unknown key. */
    async authenticate(authorization: string | undefined): Promise<string | undefined> {
      const key = bearerCredential(authorization);
      if (!key) return undefined;
      const keyHash = hashApiKey(key);
      const cached = verified.get(keyHash);
      if (cached && cached.until > now()) return cached.org;
      const org = await deps.store.findOrg(keyHash);
      if (org && deps.cacheSeconds > 0) verified.set(keyHash, { org, until: now() + deps.cacheSeconds * 1000 });
      return org;
    },
  };
}

export type ApiKeysCore = ReturnType<typeof apiKeysCore>;
