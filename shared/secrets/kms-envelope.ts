import { DecryptCommand, GenerateDataKeyCommand, InvalidCiphertextException, type KMSClient } from "@aws-sdk/client-kms";
import { canonicalContext, envelope, envelopeParts, gcmOpen, gcmSeal, SecretOpenError } from "./aes-gcm.ts";
import type { SecretBox } from "./secret-box.ts";

/** The two KMS calls envelope encryption needs; `context` is the KMS encryption context. */
export interface DataKeyService {
  generateDataKey(context: Record<string, string>): Promise<{ plaintext: Uint8Array; encrypted: Uint8Array }>;
  decrypt(encrypted: Uint8Array, context: Record<string, string>): Promise<Uint8Array>;
}

export function kmsDataKeys(kms: KMSClient, keyId: string): DataKeyService {
  return {
    async generateDataKey(context) {
      const answer = await kms.send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: "AES_256", EncryptionContext: context }));
      if (!answer.Plaintext || !answer.CiphertextBlob) throw new Error("KMS GenerateDataKey answered without a key");
      return { plaintext: answer.Plaintext, encrypted: answer.CiphertextBlob };
    },

    async decrypt(encrypted, context) {
      try {
        const answer = await kms.send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: encrypted, EncryptionContext: context }));
        if (!answer.Plaintext) throw new Error("KMS Decrypt answered without a key");
        return answer.Plaintext;
      } catch (error) {
        // KMS's answer to a wrong encryption context or an altered key blob.
        if (error instanceof InvalidCiphertextException) throw new SecretOpenError("KMS refused the data key", { cause: error });
        throw error;
      }
    },
  };
}

function cacheKeyOf(encrypted: Uint8Array, context: Record<string, string>): string {
  return `${Buffer.from(encrypted).toString("base64")}:${canonicalContext(context).toString("base64")}`;
}

export interface KmsEnvelopeOptions {
  /** How long an opened data key is kept in memory. */
  cacheSeconds?: number;
  /** At most this many data keys are kept; the least recently used goes first. */
  maxCachedKeys?: number;
  now?: () => number;
}

/**
 * AWS mode's box: each seal asks KMS for a fresh AES-256 data key bound to `context` and encrypts
 * locally with AES-256-GCM (the context is also the GCM additional data). Envelope:
 * `v1.kms.<encrypted data key>.<iv>.<ciphertext and tag>`, base64url. Opened data keys are cached
 * per (encrypted key, context) for a few minutes, so a flow that opens the same secrets at every
 * step calls KMS once, and a different context still goes to KMS, which refuses it.
 */
export function kmsEnvelopeBox(dataKeys: DataKeyService, options: KmsEnvelopeOptions = {}): SecretBox {
  const ttlMs = (options.cacheSeconds ?? 300) * 1000;
  const maxEntries = options.maxCachedKeys ?? 1000;
  const now = options.now ?? Date.now;
  // Promises, so concurrent opens of one envelope share one KMS call.
  const cache = new Map<string, { key: Promise<Uint8Array>; expiresAt: number }>();

  function remember(cacheKey: string, key: Promise<Uint8Array>): void {
    cache.delete(cacheKey);
    cache.set(cacheKey, { key, expiresAt: now() + ttlMs });
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value as string);
  }

  function dataKey(encrypted: Buffer, context: Record<string, string>): Promise<Uint8Array> {
    const cacheKey = cacheKeyOf(encrypted, context);
    const cached = cache.get(cacheKey);
    if (cached && cached.expiresAt > now()) {
      // Re-inserted so the map's order stays least recently used first.
      cache.delete(cacheKey);
      cache.set(cacheKey, cached);
      return cached.key;
    }
    const key = dataKeys.decrypt(encrypted, context);
    remember(cacheKey, key);
    key.catch(() => {
      if (cache.get(cacheKey)?.key === key) cache.delete(cacheKey);
    });
    return key;
  }

  return {
    async seal(plaintext, context) {
      const { plaintext: key, encrypted } = await dataKeys.generateDataKey(context);
      const { iv, ciphertext } = gcmSeal(key, plaintext, context);
      remember(cacheKeyOf(encrypted, context), Promise.resolve(key));
      return envelope("kms", [encrypted, iv, ciphertext]);
    },

    async open(sealed, context) {
      const [encrypted, iv, ciphertext] = envelopeParts(sealed, "kms", 3) as [Buffer, Buffer, Buffer];
      return gcmOpen(await dataKey(encrypted, context), iv, ciphertext, context);
    },
  };
}
