import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localOrg } from "../../infra/local/stack.ts";
import { rawAccess, type Attempt } from "../support/raw-requests.ts";
import { startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let send: ReturnType<typeof rawAccess>["send"];
let tableContents: ReturnType<typeof rawAccess>["tableContents"];
let existingId: string;

beforeAll(async () => {
  stack = await startTestStack();
  ({ send, tableContents } = rawAccess(stack));
  const created = await send("POST", "/auth/connections", { json: { domain: "taken.com", profile_name: "owner" } });
  existingId = ((await created.json()) as { id: string }).id;
  expect((await send("POST", "/credentials", { json: { name: "kept", domain: "taken.com", values: { password: "x" } } })).status).toBe(201);
});

afterAll(async () => {
  await stack?.stop();
});

const create = (json: unknown): [string, string, Attempt] => ["POST", "/auth/connections", { json }];
const patch = (json: unknown): [string, string, Attempt] => ["PATCH", "/auth/connections/{existing}", { json }];
const list = (query: string): [string, string, Attempt] => ["GET", `/auth/connections?${query}`, {}];
// Raw JSON: in an object literal `__proto__` sets the prototype, and JSON.stringify would not send it.
const createCredential = (values: string): [string, string, Attempt] => ["POST", "/credentials", { raw: `{"name":"c","domain":"x.com","values":${values}}` }];
const updateCredential = (body: string): [string, string, Attempt] => ["PATCH", "/credentials/kept", { raw: body }];
const submitRaw = (body: string): [string, string, Attempt] => ["POST", "/auth/connections/{existing}/submit", { raw: body }];

const cases: Array<{ name: string; request: [string, string, Attempt]; status: number; code: string; mentions: string }> = [
  { name: "malformed JSON", request: ["POST", "/auth/connections", { raw: '{"domain": "x.com",' }], status: 400, code: "bad_request", mentions: "not valid JSON" },
  { name: "JSON array body", request: create([1, 2]), status: 400, code: "bad_request", mentions: "body" },
  { name: "JSON string body", request: create("hello"), status: 400, code: "bad_request", mentions: "body" },
  { name: "empty body on create", request: ["POST", "/auth/connections", { raw: "" }], status: 400, code: "bad_request", mentions: "domain" },
  { name: "missing domain", request: create({ profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "missing profile_name", request: create({ domain: "x.com" }), status: 400, code: "bad_request", mentions: "profile_name" },
  { name: "domain of the wrong type", request: create({ domain: 42, profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "empty domain", request: create({ domain: "", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "domain given as a URL", request: create({ domain: "https://x.com/login", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "domain with a port", request: create({ domain: "x.com:8443", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "domain with an empty label", request: create({ domain: "a..com", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "domain with a leading hyphen", request: create({ domain: "-bad.com", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "over-long domain", request: create({ domain: `${"a".repeat(250)}.com`, profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain" },
  { name: "empty profile_name", request: create({ domain: "x.com", profile_name: "" }), status: 400, code: "bad_request", mentions: "profile_name" },
  { name: "over-long profile_name", request: create({ domain: "x.com", profile_name: "p".repeat(256) }), status: 400, code: "bad_request", mentions: "profile_name" },
  { name: "profile_name with a slash", request: create({ domain: "x.com", profile_name: "a/b" }), status: 400, code: "bad_request", mentions: "profile_name" },
  { name: "interval below 300", request: create({ domain: "x.com", profile_name: "p", health_check_interval: 299 }), status: 400, code: "bad_request", mentions: "health_check_interval" },
  { name: "interval above 86400", request: create({ domain: "x.com", profile_name: "p", health_check_interval: 86401 }), status: 400, code: "bad_request", mentions: "health_check_interval" },
  { name: "fractional interval", request: create({ domain: "x.com", profile_name: "p", health_check_interval: 300.5 }), status: 400, code: "bad_request", mentions: "health_check_interval" },
  { name: "health_checks as a string", request: create({ domain: "x.com", profile_name: "p", health_checks: "yes" }), status: 400, code: "bad_request", mentions: "health_checks" },
  { name: "login_url that is not http", request: create({ domain: "x.com", profile_name: "p", login_url: "ftp://x.com" }), status: 400, code: "bad_request", mentions: "login_url" },
  { name: "credential of no known shape", request: create({ domain: "x.com", profile_name: "p", credential: { path: "a/b" } }), status: 400, code: "bad_request", mentions: "credential" },
  { name: "allowed_domains with a URL", request: create({ domain: "x.com", profile_name: "p", allowed_domains: ["ok.com", "http://no.com"] }), status: 400, code: "bad_request", mentions: "allowed_domains[1]" },
  { name: "domain that is a public suffix (co.uk)", request: create({ domain: "co.uk", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain: 'co.uk' is a public suffix" },
  { name: "domain that is a private public suffix (github.io)", request: create({ domain: "github.io", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain: 'github.io' is a public suffix" },
  { name: "domain that is a top-level domain (com)", request: create({ domain: "com", profile_name: "p" }), status: 400, code: "bad_request", mentions: "domain: 'com' is a public suffix" },
  { name: "allowed_domains with a public suffix", request: create({ domain: "x.com", profile_name: "p", allowed_domains: ["ok.com", "github.io"] }), status: 400, code: "bad_request", mentions: "allowed_domains[1]: 'github.io' is a public suffix" },
  { name: "update with a public suffix in allowed_domains", request: patch({ allowed_domains: ["co.uk"] }), status: 400, code: "bad_request", mentions: "allowed_domains[0]: 'co.uk' is a public suffix" },
  { name: "credential for a public suffix", request: ["POST", "/credentials", { json: { name: "c", domain: "co.uk", values: { password: "x" } } }], status: 400, code: "bad_request", mentions: "domain: 'co.uk' is a public suffix" },
  { name: "proxy by name", request: create({ domain: "x.com", profile_name: "p", proxy: { name: "eu" } }), status: 400, code: "bad_request", mentions: "proxy" },
  { name: "duplicate create", request: create({ domain: "taken.com", profile_name: "owner" }), status: 409, code: "conflict", mentions: "already exists" },
  { name: "create as form data", request: ["POST", "/auth/connections", { raw: "domain=x.com", contentType: "application/x-www-form-urlencoded" }], status: 415, code: "unsupported_media_type", mentions: "application/json" },
  { name: "body over 1 MiB", request: ["POST", "/auth/connections", { raw: Buffer.alloc(1024 * 1024 + 10, 32) }], status: 413, code: "payload_too_large", mentions: "limit" },
  { name: "update with a wrong type", request: patch({ auto_reauth: "false" }), status: 400, code: "bad_request", mentions: "auto_reauth" },
  { name: "update with interval out of range", request: patch({ health_check_interval: 10 }), status: 400, code: "bad_request", mentions: "health_check_interval" },
  { name: "update of an unknown id", request: ["PATCH", "/auth/connections/ac_unknown", { json: { auto_reauth: false } }], status: 404, code: "not_found", mentions: "ac_unknown" },
  { name: "get of an unknown id", request: ["GET", "/auth/connections/ac_unknown", {}], status: 404, code: "not_found", mentions: "ac_unknown" },
  { name: "delete of an unknown id", request: ["DELETE", "/auth/connections/ac_unknown", {}], status: 404, code: "not_found", mentions: "ac_unknown" },
  { name: "limit 0", request: list("limit=0"), status: 400, code: "bad_request", mentions: "limit" },
  { name: "limit 101", request: list("limit=101"), status: 400, code: "bad_request", mentions: "limit" },
  { name: "limit -1", request: list("limit=-1"), status: 400, code: "bad_request", mentions: "limit" },
  { name: "limit abc", request: list("limit=abc"), status: 400, code: "bad_request", mentions: "limit" },
  { name: "offset -5", request: list("offset=-5"), status: 400, code: "bad_request", mentions: "offset" },
  { name: "no token", request: ["GET", "/auth/connections", { auth: null }], status: 401, code: "unauthorized", mentions: "API key" },
  { name: "wrong token", request: ["GET", "/auth/connections", { auth: "Bearer ak_wrong" }], status: 401, code: "unauthorized", mentions: "API key" },
  { name: "token without Bearer", request: ["DELETE", "/auth/connections/{existing}", { auth: "ak_wrong" }], status: 401, code: "unauthorized", mentions: "API key" },
  { name: "unknown route", request: ["GET", "/auth/nothing-here", {}], status: 404, code: "not_found", mentions: "/auth/nothing-here" },
  { name: "get with a malformed percent-escape", request: ["GET", "/auth/connections/%ZZ", {}], status: 400, code: "bad_request", mentions: "/auth/connections/%ZZ" },
  { name: "get with a truncated UTF-8 escape", request: ["GET", "/auth/connections/%E0%A4%A", {}], status: 400, code: "bad_request", mentions: "/auth/connections/%E0%A4%A" },
  { name: "delete with an escape that is no UTF-8", request: ["DELETE", "/auth/connections/%ff", {}], status: 400, code: "bad_request", mentions: "/auth/connections/%ff" },
  { name: "profile_name '.'", request: create({ domain: "x.com", profile_name: "." }), status: 400, code: "bad_request", mentions: "profile_name: must not be only dots" },
  { name: "profile_name '..'", request: create({ domain: "x.com", profile_name: ".." }), status: 400, code: "bad_request", mentions: "profile_name: must not be only dots" },
  { name: "profile named '.'", request: ["POST", "/profiles", { json: { name: "." } }], status: 400, code: "bad_request", mentions: "name: must not be only dots" },
  { name: "credential named '..'", request: ["POST", "/credentials", { json: { name: "..", domain: "x.com", values: { password: "x" } } }], status: 400, code: "bad_request", mentions: "name: must not be only dots" },
  { name: "pool named '..'", request: ["POST", "/browser_pools", { json: { name: "..", size: 1 } }], status: 400, code: "bad_request", mentions: "name: must not be only dots" },
  { name: "archive upload as text/plain", request: ["PUT", "/profiles/owner/archive", { raw: "hello", contentType: "text/plain" }], status: 415, code: "unsupported_media_type", mentions: "application/zstd" },
  { name: "pool start_url on file:", request: ["POST", "/browser_pools", { json: { size: 1, start_url: "file:///etc/passwd" } }], status: 400, code: "bad_request", mentions: "start_url: the scheme 'file:'" },
  { name: "pool start_url on javascript:", request: ["POST", "/browser_pools", { json: { size: 1, start_url: "javascript:alert(1)" } }], status: 400, code: "bad_request", mentions: "start_url: the scheme 'javascript:'" },
  { name: "pool start_url on data:", request: ["POST", "/browser_pools", { json: { size: 1, start_url: "data:text/html,x" } }], status: 400, code: "bad_request", mentions: "start_url: the scheme 'data:'" },
  { name: "credential value named __proto__", request: createCredential('{"__proto__":"p1"}'), status: 400, code: "bad_request", mentions: "values.__proto__: '__proto__' is a reserved name" },
  { name: "credential value named __proto__ holding an object", request: createCredential('{"password":"x","__proto__":{"password":"p1"}}'), status: 400, code: "bad_request", mentions: "values.__proto__" },
  { name: "credential value named constructor", request: createCredential('{"constructor":"x"}'), status: 400, code: "bad_request", mentions: "values.constructor: 'constructor' is a reserved name" },
  { name: "credential value named prototype", request: createCredential('{"prototype":"x"}'), status: 400, code: "bad_request", mentions: "values.prototype" },
  { name: "credential update with a value named __proto__", request: updateCredential('{"values":{"__proto__":"p1"}}'), status: 400, code: "bad_request", mentions: "values.__proto__" },
  { name: "credential update removing __proto__", request: updateCredential('{"remove_value_keys":["__proto__"]}'), status: 400, code: "bad_request", mentions: "remove_value_keys.0: '__proto__' is a reserved name" },
  { name: "submit with a field named __proto__", request: submitRaw('{"field_values":{"__proto__":{"password":"p1"}}}'), status: 400, code: "bad_request", mentions: "field_values.__proto__" },
  { name: "submit with a field named constructor", request: submitRaw('{"fields":{"constructor":"x"}}'), status: 400, code: "bad_request", mentions: "fields.constructor" },
];

describe("bad input", () => {
  it.each(cases)("$name answers $status $code and changes nothing", async ({ request, status, code, mentions }) => {
    const [method, path, attempt] = request;
    const before = await tableContents();

    const response = await send(method, path.replace("{existing}", existingId), attempt);
    const body = (await response.json()) as { code: string; message: string };

    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("x-should-retry")).toBe("false");
    expect(body.code).toBe(code);
    expect(body.message).toContain(mentions);
    expect(JSON.stringify(body)).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/);
    expect(await tableContents()).toEqual(before);
  });

  it("holds more than 25 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });
});

/**
 * The local gateway always runs in local mode, which keeps any port and private addresses for test
 * sites: the AWS-mode rules are shown by running the deployed handler as Lambda does, in a process
 * of its own with DEPLOYMENT_MODE=aws, against this test's table.
 */
async function invokeInAwsMode(handler: string, method: string, resource: string, pathParameters: Record<string, string> | null, json: unknown) {
  const event = {
    resource,
    path: resource,
    httpMethod: method,
    headers: { "content-type": "application/json" },
    multiValueHeaders: { "content-type": ["application/json"] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters,
    stageVariables: null,
    body: JSON.stringify(json),
    isBase64Encoded: false,
    requestContext: { requestId: "aws-mode", stage: "prod", httpMethod: method, path: resource, authorizer: { org: localOrg } },
  };
  // Named as the stack names them for every function; no case here reaches the bucket or the state machine.
  const environment = {
    ...process.env,
    DEPLOYMENT_MODE: "aws",
    TABLE_NAME: stack.tableName,
    BUCKET_NAME: stack.tableName,
    STATE_MACHINE_ARN: "arn:aws:states:us-east-1:000000000000:stateMachine:connection-workflow",
    DYNAMODB_ENDPOINT: stack.dynamoEndpoint,
    LOG_LEVEL: "error",
  };
  const { stdout } = await promisify(execFile)(process.execPath, ["test/support/invoke-handler.ts", resolve(handler), JSON.stringify(event)], { env: environment });
  return (JSON.parse(stdout) as { answer: { statusCode: number; headers: Record<string, string>; body: string } }).answer;
}

const awsModeCases: Array<{ name: string; invoke: () => ReturnType<typeof invokeInAwsMode>; mentions: string }> = [
  {
    name: "create with a login_url on port 8443",
    invoke: () => invokeInAwsMode("functions/http/connections/create.ts", "POST", "/auth/connections", null, { domain: "x.com", profile_name: "p", login_url: "https://x.com:8443/login" }),
    mentions: "login_url: port 8443 is not 80 or 443",
  },
  {
    name: "update to a login_url on port 8080",
    invoke: () => invokeInAwsMode("functions/http/connections/update.ts", "PATCH", "/auth/connections/{id}", { id: existingId }, { login_url: "http://taken.com:8080/login" }),
    mentions: "login_url: port 8080 is not 80 or 443",
  },
  {
    name: "pool start_url at the metadata service",
    invoke: () => invokeInAwsMode("functions/http/pools/create.ts", "POST", "/browser_pools", null, { size: 1, start_url: "http://169.254.169.254/latest/meta-data/" }),
    mentions: "start_url: 169.254.169.254: a link-local address, which this deployment does not reach",
  },
  {
    name: "pool start_url at an IPv4-translated link-local address",
    invoke: () => invokeInAwsMode("functions/http/pools/create.ts", "POST", "/browser_pools", null, { size: 1, start_url: "http://[::ffff:0:a9fe:a9fe]/" }),
    mentions: "which this deployment does not reach",
  },
];

describe("bad input in AWS mode", () => {
  it.each(awsModeCases)("$name answers 400 bad_request and changes nothing", async ({ invoke, mentions }) => {
    const before = await tableContents();

    const answer = await invoke();
    const body = JSON.parse(answer.body) as { code: string; message: string };

    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.headers["x-should-retry"]).toBe("false");
    expect(body.code).toBe("bad_request");
    expect(body.message).toContain(mentions);
    expect(await tableContents()).toEqual(before);
  });
});
