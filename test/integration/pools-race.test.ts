import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoolResource, SessionResource } from "#shared/domain/pool.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { localOrg } from "../../infra/local/stack.ts";
import { eventually } from "../support/poll.ts";
import { answersCdp, chromiumProcesses, poolApi } from "../support/pools.ts";
import { startTestStack, tableClientAt } from "../support/stack.ts";
import { patientMs } from "../support/patience.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let call: ReturnType<typeof poolApi>;
let browserRoot: string;
let store: ReturnType<typeof dynamoPoolStore>;

beforeAll(async () => {
  stack = await startTestStack();
  browserRoot = process.env.BROWSER_DATA_DIR as string;
  call = poolApi(stack);
  store = dynamoPoolStore(tableClientAt(stack.dynamoEndpoint), stack.tableName);
});

afterAll(async () => {
  await stack?.stop();
  expect(chromiumProcesses(browserRoot).size).toBe(0);
});

const rounds = 20;
const acquiresPerRound = 20;
const flushesPerRound = 5;

/** Records and processes name the same browsers, and the pool's counts are theirs. */
async function recordsMatchProcesses(poolId: string) {
  const snapshot = await store.read(localOrg, poolId);
  const { body: pool } = await call<PoolResource>("GET", `/browser_pools/${poolId}`);
  const recorded = (snapshot?.browsers ?? []).map((browser) => browser.session_id).sort();
  const running = [...chromiumProcesses(browserRoot).keys()].sort();
  const consistent = JSON.stringify(recorded) === JSON.stringify(running) && pool.available_count + pool.acquired_count === running.length;
  return consistent ? { pool, recorded } : undefined;
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

describe("acquires racing flushes", () => {
  // Longer than the default timeout: each round refills the pool, and each browser starts its Node entry besides Chromium.
  it(`never destroys a leased browser nor leases one twice, over ${rounds} rounds`, async () => {
    const { body: pool } = await call<PoolResource>("POST", "/browser_pools", { size: 10, fill_rate_per_minute: 100_000 });
    let everLeased = 0;
    let everFlushed = 0;
    for (let round = 1; round <= rounds; round++) {
      const filled = await eventually(async () => {
        const state = await recordsMatchProcesses(pool.id);
        return state?.pool.available_count === 10 ? state.recorded : undefined;
      }, `round ${round}: the pool to fill to 10`);

      const operations = shuffled([
        ...Array.from({ length: acquiresPerRound }, () => () => call<SessionResource>("POST", `/browser_pools/${pool.id}/acquire`, { acquire_timeout_seconds: 1 })),
        ...Array.from({ length: flushesPerRound }, () => () => call<SessionResource>("POST", `/browser_pools/${pool.id}/flush`)),
      ]);
      // Started a moment apart, so flushes land between acquires rather than all before them.
      const answers = await Promise.all(operations.map(async (operation, index) => {
        await sleep(index * 4);
        return operation();
      }));
      expect(answers.every((answer) => answer.status === 200 || answer.status === 204)).toBe(true);

      const sessions = answers.filter((answer) => answer.status === 200).map((answer) => answer.body);
      const ids = sessions.map((session) => session.session_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeLessThanOrEqual(10);
      everLeased += ids.length;

      const running = chromiumProcesses(browserRoot);
      expect(ids.filter((id) => !running.has(id))).toEqual([]);
      everFlushed += filled.filter((id) => !running.has(id)).length;
      const answering = await Promise.all(sessions.map((session) => answersCdp(session.cdp_ws_url)));
      expect(answering.every(Boolean)).toBe(true);

      const settled = await eventually(() => recordsMatchProcesses(pool.id), `round ${round}: records and processes to agree`);
      expect(settled.pool.acquired_count).toBe(ids.length);
      expect(ids.every((id) => settled.recorded.includes(id))).toBe(true);

      const releases = await Promise.all(ids.map((id) => call("POST", `/browser_pools/${pool.id}/release`, { session_id: id, reuse: true })));
      expect(releases.map((release) => release.status).every((status) => status === 204)).toBe(true);
    }
    // The rounds raced for real: acquires found browsers while flushes destroyed idle ones.
    expect(everLeased).toBeGreaterThan(rounds * 2);
    expect(everFlushed).toBeGreaterThan(rounds * 2);
  }, patientMs(180_000));
});
