import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import type { BrowserProvider } from "#shared/domain/browser-provider.ts";
import { poolFiller } from "#shared/domain/pool-filler.ts";
import { poolsCore } from "#shared/domain/pools.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { tableClientAt } from "./stack.ts";

/** The real pool core and filler over `browsers`, on a table of their own in the tests' DynamoDB Local; pools name no profile. */
export async function poolsOnDynamoDbLocal(browsers: BrowserProvider, now?: () => Date) {
  const tableName = `ecs-pool-${randomBytes(6).toString("hex")}`;
  await ensureTable(inject("dynamoEndpoint"), tableName);
  const store = dynamoPoolStore(tableClientAt(inject("dynamoEndpoint")), tableName);
  return {
    store,
    core: poolsCore({ pools: store, browsers, resolveProfile: async () => "unused", now }),
    filler: poolFiller({ pools: store, browsers, now }),
  };
}
