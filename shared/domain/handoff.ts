import { createHash, randomBytes, randomUUID } from "node:crypto";
import { errors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import type { SecretBox } from "../secrets/secret-box.ts";
import { UnauthorizedError } from "./errors.ts";

/**
 * The hosted login page's way in: the login route hands out a one-time code, the page exchanges it
 * (no API key) for a short-lived token that reaches only get, submit and events of that one
 * connection.
 */

/** The `scope` claim of a handoff token. */
export const handoffTokenScope = "auth_connection";

/** The table item naming the key handoff tokens are signed with. */
export const handoffSigningKeyName = "handoff-jwt";

const signingKeyBytes = 32;

export interface HandoffCodeRecord {
  code_hash: string;
  org: string;
  connection_id: string;
  /** ISO time after which the code no longer exchanges. */
  code_expires_at: string;
}

export interface HandoffStore {
  /** Stores a code by its hash; the item expires with the code. */
  putCode(record: HandoffCodeRecord): Promise<void>;
  /**
   * Deletes the code's item and returns it, only while it exists, belongs to `connectionId` and has
   * not expired at `now`: of any number of concurrent redeems of one code, one gets the record.
   */
  redeemCode(codeHash: string, connectionId: string, now: string): Promise<HandoffCodeRecord | undefined>;
  readSigningKey(name: string): Promise<string | undefined>;
  /** Stores the sealed key unless one is there already; false when another process stored one first. */
  putSigningKeyIfAbsent(name: string, sealed: string): Promise<boolean>;
}

/** What a valid handoff token grants. */
export interface HandoffGrant {
  org: string;
  connectionId: string;
  /** Epoch seconds. */
  expiresAt: number;
  /** The token's own id (its `jti`): what the caps on a token's open event streams count by. */
  tokenId: string;
}

export function hashHandoffCode(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

export interface SigningKey {
  /** The key, made and stored first if the deployment has none yet. */
  forSigning(): Promise<Buffer>;
  /** The key, or undefined while none exists (so no token can be valid); never writes. */
  forVerifying(): Promise<Buffer | undefined>;
}

/**
 * The key handoff tokens are signed with: made once for the whole deployment (the first process to
 * need it stores it, sealed; a process that loses that race reads the winner's), opened once per
 * process. `box` is asked for only when a key is first opened or made, so a bundle may load it lazily.
 */
export function handoffSigningKey(deps: { store: HandoffStore; box: () => Promise<SecretBox>; name?: string }): SigningKey {
  const name = deps.name ?? handoffSigningKeyName;
  const context = { purpose: "signing_key", name };
  let opened: Promise<Buffer> | undefined;

  async function open(sealed: string): Promise<Buffer> {
    const key = Buffer.from(await (await deps.box()).open(sealed, context), "base64");
    if (key.length !== signingKeyBytes) throw new Error(`signing key ${name} does not hold ${signingKeyBytes} bytes`);
    return key;
  }

  async function create(): Promise<Buffer> {
    const key = randomBytes(signingKeyBytes);
    const sealed = await (await deps.box()).seal(key.toString("base64"), context);
    if (await deps.store.putSigningKeyIfAbsent(name, sealed)) return key;
    const winner = await deps.store.readSigningKey(name);
    if (!winner) throw new Error(`signing key ${name} vanished right after another process stored it`);
    return open(winner);
  }

  /** Caches the key once found; a failure or an absent key is asked again next time. */
  async function load(createIfAbsent: boolean): Promise<Buffer | undefined> {
    if (opened) return opened;
    const stored = await deps.store.readSigningKey(name);
    if (!stored && !createIfAbsent) return undefined;
    return (opened ??= (stored ? open(stored) : create()).catch((error: unknown) => {
      opened = undefined;
      throw error;
    }));
  }

  return {
    forSigning: async () => (await load(true))!,
    forVerifying: () => load(false),
  };
}

/** Issuing codes needs only the table: the login route carries no signing key (nor its KMS client). */
export function handoffCodeIssuer(deps: { store: HandoffStore }) {
  return {
    /** A fresh one-time code for the connection, valid until `expiresAt` (ISO); only its hash is stored. */
    async issueHandoffCode(org: string, connectionId: string, expiresAt: string): Promise<string> {
      const expires = new Date(expiresAt);
      if (Number.isNaN(expires.getTime())) throw new Error(`handoff code expiry '${expiresAt}' is not a time`);
      const code = randomBytes(32).toString("base64url");
      await deps.store.putCode({ code_hash: hashHandoffCode(code), org, connection_id: connectionId, code_expires_at: expires.toISOString() });
      return code;
    },
  };
}

export function handoffCore(deps: { store: HandoffStore; signingKey: SigningKey; tokenSeconds: number; now?: () => number }) {
  const now = deps.now ?? Date.now;

  return {
    ...handoffCodeIssuer(deps),

    /** Spends the code (once, ever) for a token scoped to its connection. */
    async exchange(connectionId: string, code: string): Promise<{ jwt: string }> {
      // Before the code is spent, so a failure to load the key leaves the code usable.
      const key = await deps.signingKey.forSigning();
      const record = await deps.store.redeemCode(hashHandoffCode(code), connectionId, new Date(now()).toISOString());
      if (!record) {
        throw new UnauthorizedError("handoff code is unknown, already used, expired or for another connection; start a new login for a fresh code");
      }
      const issuedAt = Math.floor(now() / 1000);
      const claims = {
        sub: record.connection_id,
        org: record.org,
        scope: handoffTokenScope,
        iat: issuedAt,
        exp: issuedAt + deps.tokenSeconds,
        jti: randomUUID(),
      };
      return { jwt: await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(key) };
    },
  };
}

export type HandoffCore = ReturnType<typeof handoffCore>;

export function handoffTokenVerifier(deps: { signingKey: SigningKey; now?: () => number }) {
  const now = deps.now ?? Date.now;

  return {
    /** Whether `token` is worth verifying as a handoff token rather than looking it up as an API key. */
    isHandoffToken: looksLikeJwt,

    /** What the token grants, or undefined when it is forged, altered, expired or of another scope. */
    async verify(token: string): Promise<HandoffGrant | undefined> {
      const key = await deps.signingKey.forVerifying();
      const claims = key && (await verifiedClaims(key, token, new Date(now())));
      if (!claims || claims.scope !== handoffTokenScope) return undefined;
      const { sub, org, exp, jti } = claims;
      if (typeof sub !== "string" || typeof org !== "string" || typeof exp !== "number" || typeof jti !== "string") return undefined;
      return { org, connectionId: sub, expiresAt: exp, tokenId: jti };
    },
  };
}

export type HandoffTokenVerifier = ReturnType<typeof handoffTokenVerifier>;

const base64urlPart = /^[A-Za-z0-9_-]+$/;

/**
 * Three base64url parts: the shape of a JWT, as against an opaque API key. A shape and not a parse:
 * it only picks which check a credential goes to (the token's is jose's, in full), and it runs
 * synchronously on every API key the authorizer sees.
 */
function looksLikeJwt(token: string): boolean {
  const parts = token.split(".");
  return parts.length === 3 && parts.every((part) => base64urlPart.test(part));
}

/**
 * The claims of a token signed with `key` under HS256 and not expired at `now`, or undefined when it
 * is malformed, names another algorithm (`none` included), its signature does not match or its
 * `exp` has passed or is not a number. What the other claims must say is the caller's rule.
 */
async function verifiedClaims(key: Uint8Array, token: string, now: Date): Promise<JWTPayload | undefined> {
  try {
    return (await jwtVerify(token, key, { algorithms: ["HS256"], currentDate: now })).payload;
  } catch (error) {
    if (error instanceof errors.JOSEError) return undefined;
    throw error;
  }
}
