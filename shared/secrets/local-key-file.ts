import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { envelope, envelopeParts, gcmOpen, gcmSeal, keyBytes } from "./aes-gcm.ts";
import type { SecretBox } from "./secret-box.ts";

/**
 * Local mode's box: AES-256-GCM under one key kept in `keyFile` (base64, mode 0600), made on first
 * use. Envelope: `v1.local.<iv>.<ciphertext and tag>`, base64url.
 */
export function localKeyFileBox(keyFile: string): SecretBox {
  let key: Promise<Buffer> | undefined;
  const loadKey = () =>
    (key ??= readOrCreateKey(keyFile).catch((error: unknown) => {
      key = undefined;
      throw error;
    }));

  return {
    async seal(plaintext, context) {
      const { iv, ciphertext } = gcmSeal(await loadKey(), plaintext, context);
      return envelope("local", [iv, ciphertext]);
    },

    async open(sealed, context) {
      const [iv, ciphertext] = envelopeParts(sealed, "local", 2) as [Buffer, Buffer];
      return gcmOpen(await loadKey(), iv, ciphertext, context);
    },
  };
}

/** The random key kept in `keyFile` (base64, mode 0600), made on first use; any number of processes may race to make it. */
export async function readOrCreateKey(keyFile: string): Promise<Buffer> {
  const existing = await readKey(keyFile);
  if (existing) return existing;
  await mkdir(dirname(keyFile), { recursive: true, mode: 0o700 });
  // Written whole under a private name first, so the key file never exists half-written.
  const temp = `${keyFile}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(temp, `${randomBytes(keyBytes).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  try {
    // Unlike rename, link never replaces: when two processes race, one key wins and both read it.
    await link(temp, keyFile).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  } finally {
    await rm(temp, { force: true });
  }
  const key = await readKey(keyFile);
  if (!key) throw new Error(`secrets key file ${keyFile} vanished right after it was created`);
  return key;
}

async function readKey(keyFile: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(keyFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const key = Buffer.from(text.trim(), "base64");
  if (key.length !== keyBytes) throw new Error(`secrets key file ${keyFile} does not hold a base64-encoded ${keyBytes}-byte key`);
  return key;
}
