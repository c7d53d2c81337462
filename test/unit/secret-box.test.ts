import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalContext, SecretOpenError } from "#shared/secrets/aes-gcm.ts";
import { kmsEnvelopeBox, type DataKeyService } from "#shared/secrets/kms-envelope.ts";
import { localKeyFileBox } from "#shared/secrets/local-key-file.ts";
import type { SecretBox } from "#shared/secrets/secret-box.ts";

const context = { org: "acme", credential: "cr_1" };
const secret = "hunter2-päss ✓";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "secret-box-test-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Stands in for KMS: data keys are wrapped under a master key with the encryption context as
 * additional data, so Decrypt with another context fails as KMS's does. Counts both calls.
 */
function fakeKms() {
  const master = randomBytes(32);
  const calls = { generateDataKey: 0, decrypt: 0 };
  const service: DataKeyService = {
    async generateDataKey(keyContext) {
      calls.generateDataKey++;
      const plaintext = randomBytes(32);
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", master, iv).setAAD(canonicalContext(keyContext));
      const wrapped = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return { plaintext, encrypted: Buffer.concat([iv, cipher.getAuthTag(), wrapped]) };
    },
    async decrypt(encrypted, keyContext) {
      calls.decrypt++;
      const blob = Buffer.from(encrypted);
      const decipher = createDecipheriv("aes-256-gcm", master, blob.subarray(0, 12)).setAAD(canonicalContext(keyContext));
      decipher.setAuthTag(blob.subarray(12, 28));
      try {
        return Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]);
      } catch {
        throw new SecretOpenError("KMS refused the data key");
      }
    },
  };
  return { service, calls };
}

/** Flips one bit of the envelope's `part`-th base64url field (counting from 0 after `v1.<kind>`). */
function tampered(sealed: string, part: number): string {
  const fields = sealed.split(".");
  const bytes = Buffer.from(fields[part + 2]!, "base64url");
  bytes[bytes.length - 1]! ^= 1;
  fields[part + 2] = bytes.toString("base64url");
  return fields.join(".");
}

const boxes: Array<{ kind: string; parts: number; make: () => SecretBox }> = [
  { kind: "local", parts: 2, make: () => localKeyFileBox(join(tempDir(), "secrets.key")) },
  { kind: "kms", parts: 3, make: () => kmsEnvelopeBox(fakeKms().service) },
];

describe.each(boxes)("the $kind box", ({ kind, parts, make }) => {
  it("opens what it sealed, in a printable envelope that does not show the plaintext", async () => {
    const box = make();

    const sealed = await box.seal(secret, context);
    const again = await box.seal(secret, context);

    expect(sealed).toMatch(new RegExp(`^v1\\.${kind}(\\.[A-Za-z0-9_-]+){${parts}}$`));
    expect(sealed).not.toContain("hunter2");
    expect(again).not.toBe(sealed);
    expect(await box.open(sealed, context)).toBe(secret);
    expect(await box.open(await box.seal("", context), context)).toBe("");
  });

  it("binds the context, whatever order its keys are written in", async () => {
    const box = make();
    const sealed = await box.seal(secret, context);

    expect(await box.open(sealed, { credential: "cr_1", org: "acme" })).toBe(secret);
    await expect(box.open(sealed, { org: "other", credential: "cr_1" })).rejects.toBeInstanceOf(SecretOpenError);
    await expect(box.open(sealed, { org: "acme", credential: "cr_2" })).rejects.toBeInstanceOf(SecretOpenError);
    await expect(box.open(sealed, { ...context, purpose: "x" })).rejects.toBeInstanceOf(SecretOpenError);
    await expect(box.open(sealed, {})).rejects.toBeInstanceOf(SecretOpenError);
  });

  it("refuses an altered or malformed envelope, and never says what it held", async () => {
    const box = make();
    const sealed = await box.seal(secret, context);
    const alterations = [
      ...Array.from({ length: parts }, (_, part) => tampered(sealed, part)),
      sealed.slice(0, -4),
      sealed.replace(/^v1/, "v2"),
      sealed.replace(`v1.${kind}`, `v1.${kind === "kms" ? "local" : "kms"}`),
      `${sealed}.extra`,
      sealed.replace(/\.([^.]+)$/, ".!!!"),
      "not an envelope",
    ];

    for (const altered of alterations) {
      const opening = box.open(altered, context);
      await expect(opening, altered).rejects.toBeInstanceOf(SecretOpenError);
      await expect(opening).rejects.not.toThrow(/hunter2/);
    }
  });
});

describe("the local key file", () => {
  it("is made once, on first use, readable by its owner only", async () => {
    const file = join(tempDir(), "nested", "secrets.key");
    const box = localKeyFileBox(file);

    const first = await box.seal(secret, context);
    const keyText = readFileSync(file, "utf8");
    await box.seal(secret, context);
    const later = localKeyFileBox(file);

    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(keyText.trim(), "base64")).toHaveLength(32);
    expect(await later.open(first, context)).toBe(secret);
    expect(readFileSync(file, "utf8")).toBe(keyText);
  });

  it("gives boxes that create it at the same moment one key, and leaves no temp file", async () => {
    const dir = tempDir();
    const file = join(dir, "secrets.key");
    const racers = Array.from({ length: 20 }, () => localKeyFileBox(file));

    const sealed = await Promise.all(racers.map((box, index) => box.seal(`secret ${index}`, context)));

    for (const box of racers) {
      const opened = await Promise.all(sealed.map((envelope) => box.open(envelope, context)));
      expect(opened).toEqual(racers.map((_, index) => `secret ${index}`));
    }
    expect(readdirSync(dir)).toEqual(["secrets.key"]);
  });

  it("refuses a file that does not hold a 32-byte key, naming the file but not its contents", async () => {
    const file = join(tempDir(), "secrets.key");
    writeFileSync(file, "c2hvcnQ=\n");

    await expect(localKeyFileBox(file).seal(secret, context)).rejects.toThrow(`secrets key file ${file} does not hold`);
  });

  it("cannot open another key file's envelopes", async () => {
    const sealed = await localKeyFileBox(join(tempDir(), "a.key")).seal(secret, context);

    await expect(localKeyFileBox(join(tempDir(), "b.key")).open(sealed, context)).rejects.toBeInstanceOf(SecretOpenError);
  });
});

describe("the KMS envelope (against a fake KMS: real KMS cannot be reached from here)", () => {
  it("asks KMS for one data key per seal and none to open what it just sealed", async () => {
    const kms = fakeKms();
    const box = kmsEnvelopeBox(kms.service);

    const sealed = await Promise.all([box.seal("a", context), box.seal("b", context)]);
    const opened = await Promise.all(sealed.map((envelope) => box.open(envelope, context)));

    expect(opened).toEqual(["a", "b"]);
    expect(kms.calls).toEqual({ generateDataKey: 2, decrypt: 0 });
  });

  it("calls Decrypt once for many opens of one envelope, concurrent ones included, until the cache period ends", async () => {
    const kms = fakeKms();
    let clock = 0;
    const sealed = await kmsEnvelopeBox(kms.service).seal(secret, context);
    const box = kmsEnvelopeBox(kms.service, { cacheSeconds: 300, now: () => clock });

    await Promise.all(Array.from({ length: 10 }, () => box.open(sealed, context)));
    clock += 299_000;
    await box.open(sealed, context);
    const withinPeriod = kms.calls.decrypt;
    clock += 2_000;
    await box.open(sealed, context);

    expect(withinPeriod).toBe(1);
    expect(kms.calls.decrypt).toBe(2);
  });

  it("sends a different context to KMS rather than answering from the cache", async () => {
    const kms = fakeKms();
    const box = kmsEnvelopeBox(kms.service);
    const sealed = await box.seal(secret, context);

    await expect(box.open(sealed, { ...context, org: "other" })).rejects.toBeInstanceOf(SecretOpenError);
    expect(kms.calls.decrypt).toBe(1);
    expect(await box.open(sealed, context)).toBe(secret);
  });

  it("keeps at most the configured number of data keys, dropping the least recently used", async () => {
    const kms = fakeKms();
    const sealer = kmsEnvelopeBox(kms.service);
    const [a, b, c] = await Promise.all(["a", "b", "c"].map((text) => sealer.seal(text, context)));
    const box = kmsEnvelopeBox(kms.service, { maxCachedKeys: 2 });

    await box.open(a!, context);
    await box.open(b!, context);
    await box.open(a!, context);
    await box.open(c!, context);
    const beforeReopening = kms.calls.decrypt;
    await box.open(a!, context);
    await box.open(b!, context);

    expect(beforeReopening).toBe(3);
    expect(kms.calls.decrypt).toBe(4);
  });

  it("does not keep a data key KMS refused", async () => {
    const kms = fakeKms();
    const box = kmsEnvelopeBox(kms.service);
    const sealed = await kmsEnvelopeBox(kms.service).seal(secret, context);
    const wrong = { org: "acme", credential: "cr_2" };

    await expect(box.open(sealed, wrong)).rejects.toBeInstanceOf(SecretOpenError);
    await expect(box.open(sealed, wrong)).rejects.toBeInstanceOf(SecretOpenError);

    expect(kms.calls.decrypt).toBe(2);
  });
});
