import { HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { ensureBucket } from "../../infra/local/s3-local.ts";
import { s3ArchiveStore, type ArchiveStore } from "#shared/store/archive-store.ts";
import { s3ClientSettings } from "#shared/composition/s3-archives.ts";
import { loadConfig } from "#shared/config.ts";
import type { StoredArchiveKind } from "#shared/archive/validate.ts";
import { newId } from "#shared/ids.ts";

let s3: S3Client;
let bucket: string;
let store: ArchiveStore;

beforeAll(async () => {
  const endpoint = inject("s3Endpoint");
  bucket = `archives-${randomBytes(6).toString("hex")}`;
  await ensureBucket(endpoint, bucket);
  s3 = new S3Client(s3ClientSettings(loadConfig({ ...process.env, S3_ENDPOINT: endpoint })));
  store = s3ArchiveStore(s3, bucket);
});

afterAll(() => {
  s3.destroy();
});

const uniqueOrg = () => `org-${randomBytes(4).toString("hex")}`;

const mebibyte = 1024 * 1024;

/**
 * About 100 MB, alternating random and zero mebibytes so both compressible and incompressible
 * runs cross the wire; hashed as it is produced, so nothing holds the whole object.
 */
function largeArchive(mebibytes: number): { body: Readable; size: number; sentSha256: () => string } {
  const hash = createHash("sha256");
  function* chunks() {
    for (let index = 0; index < mebibytes; index++) {
      const chunk = index % 2 === 0 ? randomBytes(mebibyte) : Buffer.alloc(mebibyte);
      hash.update(chunk);
      yield chunk;
    }
  }
  return { body: Readable.from(chunks()), size: mebibytes * mebibyte, sentSha256: () => hash.digest("hex") };
}

async function sha256Of(stream: Readable): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

describe("profile archives on s3rver", () => {
  it("keys archives by org, profile and kind", () => {
    const keys = [store.objectKey("acme", "pr_1", "tar.zst"), store.objectKey("acme", "pr_1", "json")];

    expect(keys).toEqual(["profiles/acme/pr_1/state.tar.zst", "profiles/acme/pr_1/state.json"]);
  });

  it("refuses key segments that a path would resolve", () => {
    const keyOf = (org: string) => () => store.objectKey(org, "pr_1", "json");

    expect(keyOf("..")).toThrow(/org/);
    expect(keyOf("a/b")).toThrow(/org/);
  });

  it.each([
    ["tar.zst", randomBytes(64 * 1024), "application/zstd"],
    ["json", Buffer.from(JSON.stringify({ cookies: [], origins: [] })), "application/json"],
  ] as const)("stores a %s buffer and reads it back byte for byte", async (kind, bytes, contentType) => {
    const org = uniqueOrg();
    const profileId = newId("pr");

    const stored = await store.put(org, profileId, kind, bytes);
    const opened = await store.open(org, profileId, kind);

    expect(stored).toEqual({ key: store.objectKey(org, profileId, kind), size: bytes.byteLength, etag: expect.any(String) });
    expect(opened?.size).toBe(bytes.byteLength);
    expect(opened && (await buffer(opened.body))).toEqual(bytes);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: stored.key }));
    expect(head.ContentType).toBe(contentType);
  });

  it("streams a 100 MB archive in and out unchanged", async () => {
    const org = uniqueOrg();
    const profileId = newId("pr");
    const archive = largeArchive(100);

    const stored = await store.put(org, profileId, "tar.zst", archive.body, archive.size);
    const opened = await store.open(org, profileId, "tar.zst");

    expect(stored.size).toBe(archive.size);
    expect(opened?.size).toBe(archive.size);
    expect(opened && (await sha256Of(opened.body))).toBe(archive.sentSha256());
  });

  it("names which write an archive is: open and etag answer the last put's ETag, and replace puts over it", async () => {
    const org = uniqueOrg();
    const profileId = newId("pr");
    const missing = await store.etag(org, profileId, "tar.zst");
    const first = await store.put(org, profileId, "tar.zst", Buffer.from("first"));

    const opened = await store.open(org, profileId, "tar.zst");
    opened?.body.resume();
    const replaced = await store.replace(org, profileId, "tar.zst", Buffer.from("second"), first.etag);
    const after = await store.open(org, profileId, "tar.zst");

    expect(missing).toBeUndefined();
    expect(opened?.etag).toBe(first.etag);
    expect(replaced).toBe(true);
    expect(await store.etag(org, profileId, "tar.zst")).not.toBe(first.etag);
    expect(after && (await buffer(after.body)).toString()).toBe("second");
  });

  it("opens a missing archive as undefined", async () => {
    const org = uniqueOrg();

    const opened = await store.open(org, newId("pr"), "tar.zst");

    expect(opened).toBeUndefined();
  });

  it("removes an archive, and removing again or removing a missing one succeeds", async () => {
    const org = uniqueOrg();
    const profileId = newId("pr");
    await store.put(org, profileId, "json", Buffer.from("{}"));

    await store.remove(org, profileId, "json");
    const removedAgain = store.remove(org, profileId, "json");
    const removedMissing = store.remove(org, newId("pr"), "tar.zst");

    await expect(removedAgain).resolves.toBeUndefined();
    await expect(removedMissing).resolves.toBeUndefined();
    expect(await store.open(org, profileId, "json")).toBeUndefined();
  });

  it("keeps the same profile id of two orgs apart", async () => {
    const [first, second] = [uniqueOrg(), uniqueOrg()];
    const profileId = newId("pr");
    await store.put(first, profileId, "json", Buffer.from('{"org":"first"}'));
    await store.put(second, profileId, "json", Buffer.from('{"org":"second"}'));

    await store.remove(first, profileId, "json");
    const fromFirst = await store.open(first, profileId, "json");
    const fromSecond = await store.open(second, profileId, "json");

    expect(store.objectKey(first, profileId, "json")).not.toBe(store.objectKey(second, profileId, "json"));
    expect(fromFirst).toBeUndefined();
    expect(fromSecond && (await buffer(fromSecond.body)).toString()).toBe('{"org":"second"}');
  });
});
