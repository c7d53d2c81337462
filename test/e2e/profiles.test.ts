import Kernel, { ConflictError, NotFoundError } from "@onkernel/sdk";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTarEntry, writeProfileTar } from "#shared/archive/tar.ts";
import { compressZstd } from "#shared/archive/zstd.ts";
import { maxDecompressedArchiveBytes } from "#shared/archive/validate.ts";
import { aProfileArchiveBomb, aProfileManifest, aStorageState, packTar } from "../support/archive-builders.ts";
import { rawAccess } from "../support/raw-requests.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  stack = await startTestStack();
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
});

function call(method: string, path: string, body?: Buffer | string, contentType?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${stack.apiKey}` };
  if (contentType) headers["content-type"] = contentType;
  return fetch(`${stack.url}${path}`, { method, headers, body });
}

async function bytesOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

const gibibyte = 1024 * 1024 * 1024;

const upload = (profile: string, body: Buffer | string, contentType: string) =>
  call("PUT", `/profiles/${profile}/archive`, body, contentType);

const download = (profile: string, format?: string) =>
  call("GET", `/profiles/${profile}/download${format ? `?format=${format}` : ""}`);

async function profileTar() {
  return writeProfileTar({ storageState: aStorageState(), profile: aProfileManifest() });
}

describe("profiles", () => {
  it("creates, finds by id and by name, lists, renames and deletes", async () => {
    const created = await client.profiles.create({ name: "work-account" });
    const byId = await client.profiles.retrieve(created.id);
    const byName = await client.profiles.retrieve("work-account");
    const listed = await client.profiles.list({ name: "work-account" });
    const queried = await client.profiles.list({ query: "WORK-ACC" });
    const renamed = await client.profiles.update(created.id, { name: "personal" });
    const afterRename = await client.profiles.retrieve("personal");
    await client.profiles.delete("personal");

    expect(created).toMatchObject({ name: "work-account", last_used_at: null });
    expect(Object.keys(created).sort()).toEqual(["created_at", "id", "last_used_at", "name", "updated_at"]);
    expect(byId).toEqual(created);
    expect(byName).toEqual(created);
    expect(listed.getPaginatedItems()).toEqual([created]);
    expect(queried.getPaginatedItems().map((profile) => profile.id)).toEqual([created.id]);
    expect(renamed).toMatchObject({ id: created.id, name: "personal" });
    expect(afterRename.id).toBe(created.id);
    await expect(client.profiles.retrieve("work-account")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.profiles.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("refuses a duplicate name, on create and on rename", async () => {
    const first = await client.profiles.create({ name: "taken-name" });
    const other = await client.profiles.create({ name: "other-name" });

    await expect(client.profiles.create({ name: "taken-name" })).rejects.toBeInstanceOf(ConflictError);
    await expect(client.profiles.update(other.id, { name: "taken-name" })).rejects.toBeInstanceOf(ConflictError);
    expect((await client.profiles.retrieve("taken-name")).id).toBe(first.id);
    expect((await client.profiles.retrieve("other-name")).id).toBe(other.id);
  });

  it("will not delete a profile while a connection uses it, and shows renames on its connections", async () => {
    const connection = await client.auth.connections.create({ domain: "in-use.example.com", profile_name: "busy" });

    const refused = await call("DELETE", "/profiles/busy");
    await client.profiles.update("busy", { name: "busy-renamed" });
    const renamedConnection = await client.auth.connections.retrieve(connection.id);
    const byNewName = await client.auth.connections.list({ profile_name: "busy-renamed" });
    await client.auth.connections.delete(connection.id);
    const accepted = await call("DELETE", "/profiles/busy-renamed");

    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toContain("used by auth connections");
    expect(renamedConnection.profile_name).toBe("busy-renamed");
    expect(byNewName.getPaginatedItems().map((each) => each.id)).toEqual([connection.id]);
    expect(accepted.status).toBe(204);
  });
});

describe("profile archives", () => {
  it("round-trips a tar.zst byte for byte, and serves it as a tar holding the imported storage state", async () => {
    await client.profiles.create({ name: "zst-profile" });
    const tar = await profileTar();
    const archive = await compressZstd(tar);

    const stored = await upload("zst-profile", archive, "application/zstd");
    const asStored = await download("zst-profile");
    const asTar = await download("zst-profile", "tar");
    const tarBytes = await bytesOf(asTar);

    expect(stored.status).toBe(200);
    expect(asStored.headers.get("content-type")).toBe("application/zstd");
    expect(asStored.headers.get("content-disposition")).toBe('attachment; filename="zst-profile.tar.zst"');
    expect((await bytesOf(asStored)).equals(archive)).toBe(true);
    expect(asTar.headers.get("content-type")).toBe("application/x-tar");
    expect(asTar.headers.get("content-disposition")).toBe('attachment; filename="zst-profile.tar"');
    expect(tarBytes.equals(tar)).toBe(true);
    const entry = await readTarEntry(Readable.from([tarBytes]), "storage_state.json");
    expect(JSON.parse(entry!.toString("utf8"))).toEqual(aStorageState());
  });

  it("stores an uploaded tar compressed and gives the same tar back", async () => {
    await client.profiles.create({ name: "tar-profile" });
    const tar = await profileTar();

    await upload("tar-profile", tar, "application/x-tar");
    const asStored = await download("tar-profile", "tar.zst");
    const asTar = await download("tar-profile", "tar");

    const storedBytes = await bytesOf(asStored);
    expect(storedBytes.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))).toBe(true);
    expect((await bytesOf(asTar)).equals(tar)).toBe(true);
  });

  it("keeps a storageState JSON as a legacy profile, served as JSON whatever the format", async () => {
    await client.profiles.create({ name: "legacy-profile" });
    const json = JSON.stringify(aStorageState());

    await upload("legacy-profile", json, "application/json");
    const responses = await Promise.all([download("legacy-profile"), download("legacy-profile", "tar"), download("legacy-profile", "tar.zst")]);

    for (const response of responses) {
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(response.headers.get("content-disposition")).toBe('attachment; filename="legacy-profile.json"');
      expect((await bytesOf(response)).toString("utf8")).toBe(json);
    }
  });

  it.each([
    ["a corrupt zstd", async () => Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(64, 7)]), "application/zstd", "zstd"],
    ["a tar without storage_state.json", async () => packTar([{ name: "other.txt", content: "x" }]), "application/x-tar", "storage_state.json"],
    ["a zstd tar without storage_state.json", async () => compressZstd(await packTar([{ name: "other.txt", content: "x" }])), "application/zstd", "storage_state.json"],
    ["a JSON of the wrong shape", async () => Buffer.from('{"cookies": "none"}'), "application/json", "cookies"],
    ["malformed JSON", async () => Buffer.from('{"cookies": ['), "application/json", "JSON"],
    ["an empty body", async () => Buffer.alloc(0), "application/zstd", "empty"],
  ])("answers 400 to %s and keeps the stored archive", async (_name, body, contentType, mentions) => {
    await client.profiles.create({ name: `guarded-${contentType.replace(/\W/g, "")}-${mentions.length}` }).catch(() => undefined);
    const profile = `guarded-${contentType.replace(/\W/g, "")}-${mentions.length}`;
    const original = await compressZstd(await profileTar());
    await upload(profile, original, "application/zstd");

    const refused = await upload(profile, await body(), contentType);
    const error = (await refused.json()) as { code: string; message: string };
    const after = await bytesOf(await download(profile));

    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    expect(error.code).toBe("bad_request");
    expect(error.message).toContain(mentions);
    expect(after.equals(original)).toBe(true);
  });

  it("answers 415 naming the accepted types to an upload sent as text/plain, and changes nothing", async () => {
    const { tableContents } = rawAccess(stack);
    await client.profiles.create({ name: "plain-text-upload" });
    const original = await compressZstd(await profileTar());
    await upload("plain-text-upload", original, "application/zstd");
    const before = await tableContents();

    const refused = await upload("plain-text-upload", "hello", "text/plain");
    const error = (await refused.json()) as { code: string; message: string };

    expect(refused.status).toBe(415);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    expect(error).toEqual({
      code: "unsupported_media_type",
      message: "unsupported content type 'text/plain': send one of application/zstd, application/x-tar, application/json",
    });
    expect(await tableContents()).toEqual(before);
    expect((await bytesOf(await download("plain-text-upload"))).equals(original)).toBe(true);
  });

  it.each([
    ["creates a profile named '.'", () => call("POST", "/profiles", JSON.stringify({ name: "." }), "application/json")],
    ["creates a profile named '..'", () => call("POST", "/profiles", JSON.stringify({ name: ".." }), "application/json")],
    ["renames a profile to '..'", () => call("PATCH", "/profiles/dot-target", JSON.stringify({ name: ".." }), "application/json")],
  ])("answers 400 and changes nothing when a request %s, a name no URL path could reach", async (_name, send) => {
    const { tableContents } = rawAccess(stack);
    await client.profiles.create({ name: "dot-target" }).catch(() => undefined);
    const before = await tableContents();

    const refused = await send();
    const error = (await refused.json()) as { code: string; message: string };

    expect(refused.status).toBe(400);
    expect(error.code).toBe("bad_request");
    expect(error.message).toContain("name: must not be only dots");
    expect(await tableContents()).toEqual(before);
  });

  it("answers 413 to an archive over the upload limit", async () => {
    await client.profiles.create({ name: "too-big" });

    const response = await upload("too-big", Buffer.alloc(4 * 1024 * 1024 + 1), "application/zstd");

    expect(response.status).toBe(413);
  });

  it("answers 413 naming the limit to a small archive that decompresses past the cap, and stores nothing", async () => {
    await client.profiles.create({ name: "bomb" });
    const bomb = await aProfileArchiveBomb(gibibyte);

    const response = await upload("bomb", bomb, "application/zstd");
    const error = (await response.json()) as { code: string; message: string };
    const stored = await download("bomb");

    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(response.status).toBe(413);
    expect(error).toEqual({ code: "payload_too_large", message: `the archive is larger than the ${maxDecompressedArchiveBytes} byte limit once decompressed` });
    expect(stored.status).toBe(404);
  });

  it("answers 404 with a clear message before any archive is saved, and 400 to an unknown format", async () => {
    await client.profiles.create({ name: "empty-profile" });

    const missing = await download("empty-profile");
    const unknownFormat = await download("empty-profile", "zip");
    const unknownProfile = await download("no-such-profile");

    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { message: string }).message).toContain("has no saved session yet");
    expect(unknownFormat.status).toBe(400);
    expect(((await unknownFormat.json()) as { message: string }).message).toContain("format");
    expect(unknownProfile.status).toBe(404);
  });

  it("downloads through the official client by id and by name in both formats", async () => {
    const profile = await client.profiles.create({ name: "sdk-download" });
    const tar = await profileTar();
    const archive = await compressZstd(tar);
    await upload(profile.id, archive, "application/zstd");

    const results = await Promise.all([
      client.profiles.download(profile.id),
      client.profiles.download("sdk-download", { format: "tar.zst" }),
      client.profiles.download(profile.id, { format: "tar" }),
      client.profiles.download("sdk-download", { format: "tar" }),
    ]);
    const bodies = await Promise.all(results.map(bytesOf));

    expect(bodies[0]!.equals(archive)).toBe(true);
    expect(bodies[1]!.equals(archive)).toBe(true);
    expect(bodies[2]!.equals(tar)).toBe(true);
    expect(bodies[3]!.equals(tar)).toBe(true);
  });
});
