import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unavailableBrowsers } from "#shared/domain/browser-provider.ts";
import { ServiceUnavailableError } from "#shared/domain/errors.ts";
import type { PoolResource, SessionResource } from "#shared/domain/pool.ts";
import { poolsCore } from "#shared/domain/pools.ts";
import { noAwsBrowsers } from "#shared/composition/browsers.ts";
import { errorResponse } from "#shared/http/responses.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { localClient } from "../../infra/local/dynamodb-local.ts";
import { localOrg } from "../../infra/local/stack.ts";
import { eventually } from "../support/poll.ts";
import { chromiumProcesses, poolApi } from "../support/pools.ts";
import { startTestStack, tableClientAt } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let db: DynamoDBDocumentClient;
let call: ReturnType<typeof poolApi>;
let browserRoot: string;
let idleSession: string;
let otherPoolSession: string;

beforeAll(async () => {
  stack = await startTestStack();
  browserRoot = process.env.BROWSER_DATA_DIR as string;
  db = DynamoDBDocumentClient.from(localClient(stack.dynamoEndpoint));
  call = poolApi(stack);
  await call("POST", "/browser_pools", { name: "main", size: 1, fill_rate_per_minute: 6000 });
  await call("POST", "/browser_pools", { name: "other", size: 1, fill_rate_per_minute: 6000 });
  const other = await call<SessionResource>("POST", "/browser_pools/other/acquire", { acquire_timeout_seconds: 20 });
  otherPoolSession = other.body.session_id;
  const main = await eventually(async () => {
    const { body } = await call<PoolResource>("GET", "/browser_pools/main");
    return body.available_count === 1 ? body : undefined;
  }, "pool 'main' to fill");
  idleSession = (await tableContents()).find((item) => item.pk === `POOL#${localOrg}#${main.id}` && item.state === "idle")?.session_id;
});

afterAll(async () => {
  await stack?.stop();
});

async function tableContents() {
  const scan = await db.send(new ScanCommand({ TableName: stack.tableName, ConsistentRead: true }));
  return (scan.Items ?? []).sort((a, b) => `${a.pk}${a.sk}`.localeCompare(`${b.pk}${b.sk}`));
}

type Request = [method: string, path: string, body?: unknown, raw?: string];

const create = (body: unknown): Request => ["POST", "/browser_pools", body];
const update = (body: unknown): Request => ["PATCH", "/browser_pools/main", body];
const acquire = (body: unknown): Request => ["POST", "/browser_pools/main/acquire", body];
const release = (body: unknown): Request => ["POST", "/browser_pools/main/release", body];

const cases: Array<{ name: string; request: () => Request; status: number; code: string; mentions: string }> = [
  { name: "get of an unknown pool", request: () => ["GET", "/browser_pools/nope"], status: 404, code: "not_found", mentions: "nope" },
  { name: "update of an unknown pool", request: () => ["PATCH", "/browser_pools/nope", { size: 2 }], status: 404, code: "not_found", mentions: "nope" },
  { name: "delete of an unknown pool", request: () => ["DELETE", "/browser_pools/nope"], status: 404, code: "not_found", mentions: "nope" },
  { name: "acquire from an unknown pool", request: () => ["POST", "/browser_pools/bp_0000000000aaaaaaaaaa/acquire", {}], status: 404, code: "not_found", mentions: "bp_0000000000aaaaaaaaaa" },
  { name: "release to an unknown pool", request: () => ["POST", "/browser_pools/nope/release", { session_id: "bs_x" }], status: 404, code: "not_found", mentions: "nope" },
  { name: "flush of an unknown pool", request: () => ["POST", "/browser_pools/nope/flush"], status: 404, code: "not_found", mentions: "nope" },
  { name: "size 0", request: () => create({ size: 0 }), status: 400, code: "bad_request", mentions: "size" },
  { name: "size over the limit", request: () => create({ size: 51 }), status: 400, code: "bad_request", mentions: "size" },
  { name: "negative size", request: () => create({ size: -1 }), status: 400, code: "bad_request", mentions: "size" },
  { name: "fractional size", request: () => create({ size: 1.5 }), status: 400, code: "bad_request", mentions: "size" },
  { name: "size as a string", request: () => create({ size: "3" }), status: 400, code: "bad_request", mentions: "size" },
  { name: "missing size", request: () => create({ name: "x" }), status: 400, code: "bad_request", mentions: "size" },
  { name: "timeout below 10 s", request: () => create({ size: 1, timeout_seconds: 9 }), status: 400, code: "bad_request", mentions: "timeout_seconds" },
  { name: "timeout over 72 h", request: () => create({ size: 1, timeout_seconds: 259_201 }), status: 400, code: "bad_request", mentions: "timeout_seconds" },
  { name: "fill rate 0", request: () => create({ size: 1, fill_rate_per_minute: 0 }), status: 400, code: "bad_request", mentions: "fill_rate_per_minute" },
  { name: "name with a slash", request: () => create({ size: 1, name: "a/b" }), status: 400, code: "bad_request", mentions: "name" },
  { name: "start_url that is no URL", request: () => create({ size: 1, start_url: "not a url" }), status: 400, code: "bad_request", mentions: "start_url" },
  ...["file:///etc/passwd", "javascript:alert(1)", "data:text/html,x", "x-unknown:thing"].flatMap((startUrl) => [
    { name: `start_url ${startUrl}`, request: (): Request => create({ size: 1, start_url: startUrl }), status: 400, code: "bad_request", mentions: "start_url: the scheme" },
    { name: `update to start_url ${startUrl}`, request: (): Request => update({ start_url: startUrl }), status: 400, code: "bad_request", mentions: "start_url: the scheme" },
  ]),
  { name: "profile naming nothing", request: () => create({ size: 1, profile: {} }), status: 400, code: "bad_request", mentions: "profile" },
  { name: "profile that does not exist", request: () => create({ size: 1, profile: { name: "ghost" } }), status: 404, code: "not_found", mentions: "ghost" },
  { name: "duplicate name", request: () => create({ size: 1, name: "main" }), status: 409, code: "conflict", mentions: "main" },
  { name: "malformed JSON", request: () => ["POST", "/browser_pools", undefined, '{"size": 1,'], status: 400, code: "bad_request", mentions: "not valid JSON" },
  { name: "array body", request: () => create([1]), status: 400, code: "bad_request", mentions: "body" },
  { name: "update to size 0", request: () => update({ size: 0 }), status: 400, code: "bad_request", mentions: "size" },
  { name: "update to a taken name", request: () => update({ name: "other" }), status: 409, code: "conflict", mentions: "other" },
  { name: "update with headless as a string", request: () => update({ headless: "no" }), status: 400, code: "bad_request", mentions: "headless" },
  { name: "delete with force as a string", request: () => ["DELETE", "/browser_pools/main", { force: "yes" }], status: 400, code: "bad_request", mentions: "force" },
  { name: "acquire with a negative wait", request: () => acquire({ acquire_timeout_seconds: -1 }), status: 400, code: "bad_request", mentions: "acquire_timeout_seconds" },
  { name: "acquire with a wait over 25 s", request: () => acquire({ acquire_timeout_seconds: 26 }), status: 400, code: "bad_request", mentions: "acquire_timeout_seconds" },
  { name: "release without session_id", request: () => release({ reuse: true }), status: 400, code: "bad_request", mentions: "session_id" },
  { name: "release with reuse as a string", request: () => release({ session_id: idleSession, reuse: "yes" }), status: 400, code: "bad_request", mentions: "reuse" },
  { name: "release of another pool's session", request: () => release({ session_id: otherPoolSession }), status: 404, code: "not_found", mentions: "not a browser of pool 'main'" },
  { name: "release of an idle session", request: () => release({ session_id: idleSession }), status: 409, code: "conflict", mentions: "not leased" },
  { name: "list with limit 0", request: () => ["GET", "/browser_pools?limit=0"], status: 400, code: "bad_request", mentions: "limit" },
  { name: "body over 1 MiB", request: () => ["POST", "/browser_pools", undefined, `{"size": 1, "name": "${"x".repeat(1024 * 1024)}"}`], status: 413, code: "payload_too_large", mentions: "limit" },
  { name: "name '..'", request: () => create({ size: 1, name: ".." }), status: 400, code: "bad_request", mentions: "name: must not be only dots" },
  { name: "rename to '.'", request: () => update({ name: "." }), status: 400, code: "bad_request", mentions: "name: must not be only dots" },
];

describe("bad input to the pool routes", () => {
  it.each(cases)("$name: $status $code, nothing changed", async ({ request, status, code, mentions }) => {
    const before = await tableContents();
    const processesBefore = [...chromiumProcesses(browserRoot).keys()].sort();
    const [method, path, body, raw] = request();
    const answer = await call<{ code: string; message: string }>(method, path, body, raw);

    expect(answer.status).toBe(status);
    expect(answer.headers.get("content-type")).toContain("application/json");
    expect(answer.headers.get("x-should-retry")).toBe("false");
    expect(answer.body.code).toBe(code);
    expect(answer.body.message).toContain(mentions);
    expect(await tableContents()).toEqual(before);
    expect([...chromiumProcesses(browserRoot).keys()].sort()).toEqual(processesBefore);
  });

  it("still takes Chromium's own pages as a start_url", async () => {
    for (const startUrl of ["chrome://version", "about:blank"]) {
      const answer = await call<PoolResource>("PATCH", "/browser_pools/main", { start_url: startUrl });
      expect(answer.status).toBe(200);
      expect(answer.body.browser_pool_config.start_url).toBe(startUrl);
    }
    expect((await call<PoolResource>("PATCH", "/browser_pools/main", { start_url: "" })).body.browser_pool_config).not.toHaveProperty("start_url");
  });

  it("answers acquire with 503 and the reason on a deployment without pools (an AWS stack deployed without POOLS=true)", async () => {
    const core = poolsCore({
      pools: dynamoPoolStore(tableClientAt(stack.dynamoEndpoint), stack.tableName),
      browsers: unavailableBrowsers(noAwsBrowsers),
      resolveProfile: async () => "unused",
    });
    const pool = await core.create(localOrg, { size: 2 });
    expect(await core.get(localOrg, pool.id)).toMatchObject({ browser_pool_config: { size: 2 } });

    const refused = await core.acquire(localOrg, pool.id, 0).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect(errorResponse(refused, "req-acquire").statusCode).toBe(503);
    expect((refused as Error).message).toContain("deployed without pools");
  });
});
