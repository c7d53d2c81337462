import Kernel, { ConflictError, NotFoundError } from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "#shared/secrets/totp.ts";
import { rawAccess, type Attempt } from "../support/raw-requests.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let send: ReturnType<typeof rawAccess>["send"];
let tableContents: ReturnType<typeof rawAccess>["tableContents"];

beforeAll(async () => {
  stack = await startTestStack();
  client = officialClient(stack);
  ({ send, tableContents } = rawAccess(stack));
});

afterAll(async () => {
  await stack?.stop();
});

const password = "Tr0ub4dor&3-never-shown";
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

describe("credentials through the official client", () => {
  it("creates, retrieves, lists, updates, answers TOTP codes and deletes, never returning a value", async () => {
    const answers: unknown[] = [];
    const seen = <T>(answer: T): T => {
      answers.push(answer);
      return answer;
    };

    const created = seen(
      await client.credentials.create({ name: "netflix-main", domain: "Netflix.com", values: { username: "me@example.com", password }, totp_secret: totpSecret }),
    );
    const byId = seen(await client.credentials.retrieve(created.id));
    const byName = seen(await client.credentials.retrieve("netflix-main"));
    const other = seen(await client.credentials.create({ name: "github", domain: "github.com", values: {}, sso_provider: "google" }));
    const all = seen((await client.credentials.list()).getPaginatedItems());
    const ofNetflix = seen((await client.credentials.list({ domain: "netflix.com" })).getPaginatedItems());
    const queried = seen((await client.credentials.list({ query: "GIT" })).getPaginatedItems());
    const updated = seen(
      await client.credentials.update("netflix-main", { name: "netflix", values: { password: `${password}-2`, profile: "kids" }, remove_value_keys: ["username"] }),
    );
    const code = seen(await client.credentials.totpCode("netflix"));
    const cleared = seen(await client.credentials.update(created.id, { totp_secret: "", sso_provider: null }));
    await client.credentials.delete("netflix");

    expect(created).toMatchObject({
      name: "netflix-main",
      domain: "netflix.com",
      has_values: true,
      has_totp_secret: true,
      sso_provider: null,
      value_keys: ["password", "username"],
      totp_code: expect.stringMatching(/^\d{6}$/),
    });
    const { totp_code, totp_code_expires_at, ...stored } = created;
    expect(totp_code).toBe(totpCode(totpSecret, new Date(Date.parse(totp_code_expires_at!) - 1)));
    expect(byId).toEqual(stored);
    expect(byName).toEqual(stored);
    expect(other).toMatchObject({ has_values: false, value_keys: [], sso_provider: "google", has_totp_secret: false });
    expect(all.map((credential) => credential.id)).toEqual([other.id, created.id]);
    expect(all[0]).not.toHaveProperty("value_keys");
    expect(ofNetflix.map((credential) => credential.id)).toEqual([created.id]);
    expect(queried.map((credential) => credential.id)).toEqual([other.id]);
    expect(updated).toMatchObject({ id: created.id, name: "netflix", value_keys: ["password", "profile"], has_totp_secret: true });
    expect(updated).not.toHaveProperty("totp_code");
    expect(code.code).toBe(totpCode(totpSecret, new Date(Date.parse(code.expires_at) - 1)));
    expect(Date.parse(code.expires_at) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(code.expires_at) - Date.now()).toBeLessThanOrEqual(30_000);
    expect(cleared).toMatchObject({ has_totp_secret: false, sso_provider: null });
    await expect(client.credentials.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.credentials.retrieve("netflix")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.credentials.totpCode(created.id)).rejects.toBeInstanceOf(NotFoundError);
    const everything = JSON.stringify(answers);
    for (const secret of [password, "me@example.com", totpSecret, "kids"]) expect(everything).not.toContain(secret);
  });

  it("pages with the client's auto-pagination and refuses a duplicate name", async () => {
    const made = [];
    for (let index = 0; index < 5; index++) {
      made.push(await client.credentials.create({ name: `pager-${index}`, domain: "pager.example.com", values: { password } }));
    }

    const seen = [];
    for await (const credential of client.credentials.list({ domain: "pager.example.com", limit: 2 })) seen.push(credential.id);

    expect(seen).toEqual(made.map((credential) => credential.id).reverse());
    await expect(client.credentials.create({ name: "pager-0", domain: "x.com", values: {} })).rejects.toBeInstanceOf(ConflictError);
  });
});

/** Carried by bad requests, so no error answer may repeat it. */
const marker = "Sekr1t-Marker-Value";
const valid = { name: "fresh", domain: "fresh.com", values: { password: marker } };
const create = (json: unknown): [string, string, Attempt] => ["POST", "/credentials", { json }];
const patch = (json: unknown, target = "existing"): [string, string, Attempt] => ["PATCH", `/credentials/${target}`, { json }];

const cases: Array<{ name: string; request: [string, string, Attempt]; status: number; code: string; mentions: string }> = [
  { name: "missing name", request: create({ domain: "x.com", values: {} }), status: 400, code: "bad_request", mentions: "name" },
  { name: "missing domain", request: create({ name: "n", values: {} }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "missing values", request: create({ name: "n", domain: "x.com" }), status: 400, code: "bad_request", mentions: "values" },
  { name: "values as an array", request: create({ ...valid, values: [marker] }), status: 400, code: "bad_request", mentions: "values: must be an object" },
  { name: "a value that is not a string", request: create({ ...valid, values: { pin: 1234 } }), status: 400, code: "bad_request", mentions: "values.pin: must be a string" },
  { name: "a value key with a space", request: create({ ...valid, values: { "pass word": marker } }), status: 400, code: "bad_request", mentions: "field names" },
  { name: "a value over 4096 characters", request: create({ ...valid, values: { password: `${marker}${"x".repeat(4096)}` } }), status: 400, code: "bad_request", mentions: "4096" },
  {
    name: "more than 50 values",
    request: create({ ...valid, values: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, marker])) }),
    status: 400,
    code: "bad_request",
    mentions: "at most 50",
  },
  { name: "domain given as a URL", request: create({ ...valid, domain: "https://x.com/login" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "domain of the wrong type", request: create({ ...valid, domain: 7 }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "name with a slash", request: create({ ...valid, name: "a/b" }), status: 400, code: "bad_request", mentions: "name" },
  { name: "over-long name", request: create({ ...valid, name: "n".repeat(256) }), status: 400, code: "bad_request", mentions: "name" },
  { name: "totp_secret that is not base32", request: create({ ...valid, totp_secret: `${marker}!` }), status: 400, code: "bad_request", mentions: "totp_secret" },
  { name: "totp_secret under 80 bits", request: create({ ...valid, totp_secret: "JBSWY3DP" }), status: 400, code: "bad_request", mentions: "totp_secret" },
  { name: "totp_secret of the wrong type", request: create({ ...valid, totp_secret: 123456 }), status: 400, code: "bad_request", mentions: "totp_secret: must be a base32 string" },
  { name: "sso_provider with spaces", request: create({ ...valid, sso_provider: "my provider" }), status: 400, code: "bad_request", mentions: "sso_provider" },
  { name: "duplicate name", request: create({ ...valid, name: "existing" }), status: 409, code: "conflict", mentions: "already exists" },
  { name: "malformed JSON", request: ["POST", "/credentials", { raw: `{"name": "x", "values": {"password": "${marker}"` }], status: 400, code: "bad_request", mentions: "not valid JSON" },
  {
    name: "create as form data",
    request: ["POST", "/credentials", { raw: `name=x&password=${marker}`, contentType: "application/x-www-form-urlencoded" }],
    status: 415,
    code: "unsupported_media_type",
    mentions: "application/json",
  },
  { name: "update of an unknown credential", request: patch({ values: { password: marker } }, "nobody"), status: 404, code: "not_found", mentions: "nobody" },
  { name: "rename to a taken name", request: patch({ name: "other" }), status: 409, code: "conflict", mentions: "already exists" },
  { name: "update with values of the wrong type", request: patch({ values: marker }), status: 400, code: "bad_request", mentions: "values" },
  { name: "update with remove_value_keys not a list", request: patch({ remove_value_keys: "password" }), status: 400, code: "bad_request", mentions: "remove_value_keys: must be a list" },
  { name: "update with a bad totp_secret", request: patch({ totp_secret: `${marker}0189` }), status: 400, code: "bad_request", mentions: "totp_secret" },
  { name: "update with an empty name", request: patch({ name: "" }), status: 400, code: "bad_request", mentions: "name" },
  { name: "TOTP code of a credential without a secret", request: ["GET", "/credentials/existing/totp-code", {}], status: 400, code: "bad_request", mentions: "no totp_secret" },
  { name: "TOTP code of an unknown credential", request: ["GET", "/credentials/cr_unknown/totp-code", {}], status: 404, code: "not_found", mentions: "cr_unknown" },
  { name: "get of an unknown credential", request: ["GET", "/credentials/cr_unknown", {}], status: 404, code: "not_found", mentions: "cr_unknown" },
  { name: "delete of an unknown credential", request: ["DELETE", "/credentials/nobody", {}], status: 404, code: "not_found", mentions: "nobody" },
  { name: "list with limit 0", request: ["GET", "/credentials?limit=0", {}], status: 400, code: "bad_request", mentions: "limit" },
  { name: "list by a domain with a port", request: ["GET", "/credentials?domain=x.com:443", {}], status: 400, code: "bad_request", mentions: "domain" },
  { name: "no API key", request: ["POST", "/credentials", { json: valid, auth: null }], status: 401, code: "unauthorized", mentions: "API key" },
  { name: "name '.'", request: create({ ...valid, name: "." }), status: 400, code: "bad_request", mentions: "name: must not be only dots" },
  { name: "rename to '..'", request: patch({ name: ".." }), status: 400, code: "bad_request", mentions: "name: must not be only dots" },
];

describe("bad credential input", () => {
  beforeAll(async () => {
    for (const name of ["existing", "other"]) {
      const response = await send("POST", "/credentials", { json: { name, domain: "taken.com", values: { password } } });
      expect(response.status).toBe(201);
    }
  });

  it.each(cases)("$name answers $status $code, never repeats a secret, and changes nothing", async ({ request, status, code, mentions }) => {
    const [method, path, attempt] = request;
    const before = await tableContents();

    const response = await send(method, path, attempt);
    const text = await response.text();
    const body = JSON.parse(text) as { code: string; message: string };

    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("x-should-retry")).toBe("false");
    expect(body.code).toBe(code);
    expect(body.message).toContain(mentions);
    expect(text).not.toContain(marker);
    expect(text).not.toContain(password);
    expect(text).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/);
    expect(await tableContents()).toEqual(before);
  });

  it("holds at least 12 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });
});
