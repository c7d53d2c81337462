import Kernel, { ConflictError, NotFoundError } from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { officialClient, startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
const requestsSent: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  const countingFetch: typeof fetch = (input, init) => {
    requestsSent.push(`${init?.method ?? "GET"} ${String(input)}`);
    return fetch(input, init);
  };
  client = new Kernel({ baseURL: stack.url, apiKey: stack.apiKey, fetch: countingFetch });
});

afterAll(async () => {
  await stack?.stop();
});

describe("the official Kernel client against the local gateway", () => {
  it("creates, retrieves, updates and deletes a connection", async () => {
    const created = await client.auth.connections.create({ domain: "netflix.com", profile_name: "user-123" });
    const retrieved = await client.auth.connections.retrieve(created.id);
    const updated = await client.auth.connections.update(created.id, { health_check_interval: 900, auto_reauth: false });
    await client.auth.connections.delete(created.id);

    expect(retrieved).toEqual(created);
    expect(created).toMatchObject({ domain: "netflix.com", profile_name: "user-123", status: "NEEDS_AUTH" });
    expect(updated).toEqual({ ...created, health_check_interval: 900, auto_reauth: false });
    await expect(client.auth.connections.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("raises ConflictError on a duplicate after a single request, with no retries", async () => {
    const first = await client.auth.connections.create({ domain: "dup.example.com", profile_name: "once" });
    const before = requestsSent.length;

    const duplicate = client.auth.connections.create({ domain: "dup.example.com", profile_name: "once" });

    await expect(duplicate).rejects.toBeInstanceOf(ConflictError);
    await expect(duplicate.catch((error: ConflictError) => error.error)).resolves.toMatchObject({ existing_id: first.id });
    expect(requestsSent.length - before).toBe(1);
  });

  it("auto-paginates a list of 45 connections, each seen once", async () => {
    const made = new Set<string>();
    for (let index = 0; index < 45; index++) {
      made.add((await client.auth.connections.create({ domain: `page${index}.example.com`, profile_name: "pager" })).id);
    }

    const seen: string[] = [];
    for await (const connection of client.auth.connections.list({ profile_name: "pager", limit: 10 })) {
      seen.push(connection.id);
    }

    expect(seen).toHaveLength(45);
    expect(new Set(seen)).toEqual(made);
  });

  it("answers 401 to a wrong key", async () => {
    const stranger = officialClient({ ...stack, apiKey: "ak_not-a-real-key-at-all" });

    await expect(stranger.auth.connections.list()).rejects.toMatchObject({ status: 401 });
  });
});
