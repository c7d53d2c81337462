import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { UnauthorizedError } from "#shared/domain/errors.ts";
import {
  handoffCore,
  handoffSigningKey,
  handoffTokenScope,
  handoffTokenVerifier,
  hashHandoffCode,
  type HandoffCodeRecord,
  type HandoffStore,
} from "#shared/domain/handoff.ts";
import type { SecretBox } from "#shared/secrets/secret-box.ts";

/** Stands in for the table: codes by hash, keys put only if absent, as the DynamoDB adapter does. */
function memoryStore() {
  const codes = new Map<string, HandoffCodeRecord>();
  const signingKeys = new Map<string, string>();
  const store: HandoffStore = {
    async putCode(record) {
      codes.set(record.code_hash, record);
    },
    async redeemCode(codeHash, connectionId, now) {
      const record = codes.get(codeHash);
      if (!record || record.connection_id !== connectionId || record.code_expires_at <= now) return undefined;
      codes.delete(codeHash);
      return record;
    },
    async readSigningKey(name) {
      return signingKeys.get(name);
    },
    async putSigningKeyIfAbsent(name, sealed) {
      if (signingKeys.has(name)) return false;
      signingKeys.set(name, sealed);
      return true;
    },
  };
  return { store, codes, signingKeys };
}

/** Opaque handles instead of ciphertext; opening with another context fails as the real boxes do. */
function fakeBox() {
  const sealed = new Map<string, { plaintext: string; context: string }>();
  const calls = { seal: 0, open: 0 };
  const box: SecretBox = {
    async seal(plaintext, context) {
      calls.seal++;
      const handle = `sealed-${sealed.size}`;
      sealed.set(handle, { plaintext, context: JSON.stringify(context) });
      return handle;
    },
    async open(handle, context) {
      calls.open++;
      const entry = sealed.get(handle);
      if (!entry || entry.context !== JSON.stringify(context)) throw new Error("does not open");
      return entry.plaintext;
    },
  };
  return { box, calls };
}

const key = Buffer.alloc(32, 7);
const nowSeconds = 1_900_000_000;

function claims(overrides: Record<string, unknown> = {}) {
  return { sub: "ac_1", org: "acme", scope: handoffTokenScope, iat: nowSeconds, exp: nowSeconds + 900, jti: "j1", ...overrides };
}

function setup(options: { tokenSeconds?: number } = {}) {
  const memory = memoryStore();
  const { box } = fakeBox();
  let clock = nowSeconds * 1000;
  const signingKey = handoffSigningKey({ store: memory.store, box: async () => box });
  const core = handoffCore({ store: memory.store, signingKey, tokenSeconds: options.tokenSeconds ?? 900, now: () => clock });
  const verifier = handoffTokenVerifier({ signingKey, now: () => clock });
  return {
    memory,
    signingKey,
    core,
    verifier,
    advance: (ms: number) => (clock += ms),
    inFuture: (seconds: number) => new Date(clock + seconds * 1000).toISOString(),
  };
}

/** An HS256 JWT built by hand the RFC 7519 way, independent of the code under test: base64url header and claims, HMAC-SHA256 over both. */
function hs256(signingKey: Uint8Array, payload: Record<string, unknown>, header: Record<string, unknown> = { alg: "HS256", typ: "JWT" }): string {
  const signingInput = `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}`;
  return `${signingInput}.${createHmac("sha256", signingKey).update(signingInput).digest("base64url")}`;
}

describe("handoff tokens as HS256 JWTs", () => {
  it("round-trips the claims of a token signed with the key", async () => {
    const { signingKey, verifier } = setup();
    const token = hs256(await signingKey.forSigning(), claims());

    expect(verifier.isHandoffToken(token)).toBe(true);
    expect(await verifier.verify(token)).toEqual({ org: "acme", connectionId: "ac_1", expiresAt: nowSeconds + 900, tokenId: "j1" });
  });

  it("signs the RFC 7519 way: base64url header and claims, HMAC-SHA256 over both", async () => {
    const { signingKey, core, inFuture } = setup();
    const { jwt } = await core.exchange("ac_1", await core.issueHandoffCode("acme", "ac_1", inFuture(60)));

    const [header, payload, signature] = jwt.split(".") as [string, string, string];

    expect(JSON.parse(Buffer.from(header, "base64url").toString())).toEqual({ alg: "HS256", typ: "JWT" });
    expect(JSON.parse(Buffer.from(payload, "base64url").toString())).toEqual(claims({ jti: expect.any(String) }));
    expect(signature).toBe(createHmac("sha256", await signingKey.forSigning()).update(`${header}.${payload}`).digest("base64url"));
  });

  it("refuses a token whose claims were altered, or signed with another key", async () => {
    const { signingKey, verifier } = setup();
    const [header, , signature] = hs256(await signingKey.forSigning(), claims()).split(".");
    const altered = `${header}.${Buffer.from(JSON.stringify(claims({ sub: "ac_other" }))).toString("base64url")}.${signature}`;

    expect(await verifier.verify(altered)).toBeUndefined();
    expect(await verifier.verify(hs256(Buffer.alloc(32, 8), claims()))).toBeUndefined();
  });

  it("refuses alg none and any algorithm but HS256, even with a matching HMAC", async () => {
    const { signingKey, verifier } = setup();
    const serviceKey = await signingKey.forSigning();
    const payload = Buffer.from(JSON.stringify(claims())).toString("base64url");
    const none = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${payload}.`;

    expect(await verifier.verify(none)).toBeUndefined();
    expect(await verifier.verify(hs256(serviceKey, claims(), { alg: "HS512", typ: "JWT" }))).toBeUndefined();
  });

  it.each(["", "ak_abc", "a.b", "a.b.c.d", "a.b!.c"])("does not take %j for a JWT", async (token) => {
    const { signingKey, verifier } = setup();
    await signingKey.forSigning();

    expect(verifier.isHandoffToken(token)).toBe(false);
    expect(await verifier.verify(token)).toBeUndefined();
  });
});

describe("handoff codes and tokens", () => {
  it("stores only the code's hash, and exchanges the code once for a token scoped to its connection", async () => {
    const { memory, core, verifier, inFuture } = setup();
    const code = await core.issueHandoffCode("acme", "ac_1", inFuture(600));

    const { jwt } = await core.exchange("ac_1", code);

    expect(Buffer.from(code, "base64url")).toHaveLength(32);
    expect(JSON.stringify([...memory.codes.entries()])).not.toContain(code);
    expect(await verifier.verify(jwt)).toEqual({ org: "acme", connectionId: "ac_1", expiresAt: nowSeconds + 900, tokenId: expect.any(String) });
    const payload = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
    expect(payload).toMatchObject({ sub: "ac_1", org: "acme", scope: "auth_connection", iat: nowSeconds, exp: nowSeconds + 900 });
    expect(typeof payload.jti).toBe("string");
    await expect(core.exchange("ac_1", code)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("refuses an unknown code, an expired one and one of another connection, leaving the last usable", async () => {
    const { memory, core, advance, inFuture } = setup();
    const code = await core.issueHandoffCode("acme", "ac_1", inFuture(60));
    const shortLived = await core.issueHandoffCode("acme", "ac_1", inFuture(1));

    await expect(core.exchange("ac_1", "no-such-code")).rejects.toThrow(/unknown, already used, expired or for another connection/);
    await expect(core.exchange("ac_2", code)).rejects.toBeInstanceOf(UnauthorizedError);
    advance(1000);
    await expect(core.exchange("ac_1", shortLived)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(memory.codes.has(hashHandoffCode(code))).toBe(true);
    await expect(core.exchange("ac_1", code)).resolves.toHaveProperty("jwt");
  });

  it("verifies a token until it expires", async () => {
    const { core, verifier, advance, inFuture } = setup({ tokenSeconds: 60 });
    const { jwt } = await core.exchange("ac_1", await core.issueHandoffCode("acme", "ac_1", inFuture(60)));

    advance(59_000);
    const beforeExpiry = await verifier.verify(jwt);
    advance(1_000);

    expect(beforeExpiry).toMatchObject({ connectionId: "ac_1" });
    expect(await verifier.verify(jwt)).toBeUndefined();
  });

  it.each([
    ["another scope", { scope: "api" }],
    ["no scope", { scope: undefined }],
    ["no subject", { sub: undefined }],
    ["no org", { org: undefined }],
    ["a non-numeric expiry", { exp: String(nowSeconds + 900) }],
  ])("refuses a token signed with the service's key but with %s", async (_, overrides) => {
    const { signingKey, verifier } = setup();
    const serviceKey = await signingKey.forSigning();

    expect(await verifier.verify(hs256(serviceKey, claims()))).toMatchObject({ connectionId: "ac_1" });
    expect(await verifier.verify(hs256(serviceKey, claims(overrides)))).toBeUndefined();
  });
});

describe("the signing key", () => {
  it("is made once, stored sealed, and opened once per process", async () => {
    const memory = memoryStore();
    const { box, calls } = fakeBox();
    const first = handoffSigningKey({ store: memory.store, box: async () => box });
    const made = await first.forSigning();
    const secondProcess = handoffSigningKey({ store: memory.store, box: async () => box });

    const reads = await Promise.all([secondProcess.forVerifying(), secondProcess.forSigning(), secondProcess.forSigning()]);

    expect(made).toHaveLength(32);
    expect(reads).toEqual([made, made, made]);
    expect([...memory.signingKeys.values()].join()).not.toContain(made.toString("base64"));
    expect(calls).toEqual({ seal: 1, open: 1 });
  });

  it("is the same for every process when several make it at once", async () => {
    const memory = memoryStore();
    const { box } = fakeBox();
    const processes = Array.from({ length: 5 }, () => handoffSigningKey({ store: memory.store, box: async () => box }));

    const keys = await Promise.all(processes.map((process) => process.forSigning()));

    expect(memory.signingKeys.size).toBe(1);
    expect(new Set(keys.map((made) => made.toString("hex"))).size).toBe(1);
  });

  it("is neither made nor the box loaded when a token is verified before any exists", async () => {
    const memory = memoryStore();
    let boxLoads = 0;
    const signingKey = handoffSigningKey({
      store: memory.store,
      box: async () => {
        boxLoads++;
        return fakeBox().box;
      },
    });
    const verifier = handoffTokenVerifier({ signingKey });

    expect(await verifier.verify(hs256(key, claims()))).toBeUndefined();
    expect(memory.signingKeys.size).toBe(0);
    expect(boxLoads).toBe(0);
  });

  it("is asked for again after a failure to open it", async () => {
    const memory = memoryStore();
    const { box } = fakeBox();
    const made = await handoffSigningKey({ store: memory.store, box: async () => box }).forSigning();
    let failures = 1;
    const flaky = handoffSigningKey({
      store: memory.store,
      box: async () => {
        if (failures-- > 0) throw new Error("KMS unavailable");
        return box;
      },
    });

    await expect(flaky.forVerifying()).rejects.toThrow("KMS unavailable");
    expect(await flaky.forVerifying()).toEqual(made);
  });
});
