import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { UnauthorizedError } from "#shared/domain/errors.ts";
import { handoffCore, handoffSigningKey, handoffTokenVerifier, hashHandoffCode } from "#shared/domain/handoff.ts";
import { localKeyFileBox } from "#shared/secrets/local-key-file.ts";
import { dynamoHandoffStore } from "#shared/store/handoff-store.ts";
import { keys } from "#shared/store/keys.ts";
import { tableDefinition } from "#shared/store/table.ts";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { tableClientAt } from "../support/stack.ts";

const tableName = `test-handoff-${randomBytes(4).toString("hex")}`;
const db = tableClientAt(inject("dynamoEndpoint"));
const store = dynamoHandoffStore(db, tableName);
const secretsDir = mkdtempSync(join(tmpdir(), "handoff-test-"));
const box = localKeyFileBox(join(secretsDir, "secrets.key"));

/** One process's view: its own signing-key cache over the shared table and key file. */
function worker(options: { now?: () => number; keyName?: string } = {}) {
  const now = options.now ?? Date.now;
  const signingKey = handoffSigningKey({ store, box: async () => box, name: options.keyName });
  return {
    core: handoffCore({ store, signingKey, tokenSeconds: 900, now }),
    verifier: handoffTokenVerifier({ signingKey, now }),
  };
}

const inFuture = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

async function tableItems() {
  const scan = await db.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return scan.Items ?? [];
}

beforeAll(async () => {
  await ensureTable(inject("dynamoEndpoint"), tableName);
});

afterAll(() => {
  rmSync(secretsDir, { recursive: true, force: true });
});

describe("handoff codes on DynamoDB Local", () => {
  it("gives exactly one token to 10 concurrent exchanges of one code, from different processes", async () => {
    const { core } = worker();
    const code = await core.issueHandoffCode("acme", "ac_race", inFuture(600));

    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => worker().core.exchange("ac_race", code)));

    const tokens = outcomes.filter((outcome) => outcome.status === "fulfilled");
    const refusals = outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => outcome.reason as unknown);
    expect(tokens).toHaveLength(1);
    expect(refusals).toHaveLength(9);
    expect(refusals.every((reason) => reason instanceof UnauthorizedError)).toBe(true);
    expect(await worker().verifier.verify(tokens[0]!.value.jwt)).toMatchObject({ org: "acme", connectionId: "ac_race" });
  });

  it("stores the code's hash with a TTL, never the code, and refuses it once expired though the item is still there", async () => {
    let clock = Date.now();
    const expiresAt = clock + 2000;
    const { core } = worker({ now: () => clock });
    const code = await core.issueHandoffCode("acme", "ac_expiring", new Date(expiresAt).toISOString());
    const item = (await tableItems()).find((candidate) => candidate.pk === keys.handoffCode(hashHandoffCode(code)).pk);

    clock += 2000;
    const exchange = core.exchange("ac_expiring", code);

    await expect(exchange).rejects.toBeInstanceOf(UnauthorizedError);
    expect(item).toMatchObject({ org: "acme", connection_id: "ac_expiring", [tableDefinition.timeToLiveAttribute]: Math.ceil(expiresAt / 1000) });
    expect(JSON.stringify(await tableItems())).not.toContain(code);
    expect((await tableItems()).some((candidate) => candidate.pk === item?.pk)).toBe(true);
  });

  it("leaves a code usable when it is presented for another connection", async () => {
    const { core } = worker();
    const code = await core.issueHandoffCode("acme", "ac_mine", inFuture(600));

    await expect(core.exchange("ac_other", code)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(core.exchange("ac_mine", code)).resolves.toHaveProperty("jwt");
  });

  it("keeps one signing key, sealed, whichever process made it; each process's tokens verify in the others", async () => {
    const keyName = `test-key-${randomBytes(4).toString("hex")}`;
    const processes = Array.from({ length: 5 }, () => worker({ keyName }));
    const codes = await Promise.all(processes.map((each, index) => each.core.issueHandoffCode("acme", `ac_key${index}`, inFuture(600))));

    const tokens = await Promise.all(processes.map((each, index) => each.core.exchange(`ac_key${index}`, codes[index]!)));
    const grants = await Promise.all(tokens.map((token, index) => processes[(index + 1) % processes.length]!.verifier.verify(token.jwt)));

    expect(grants.map((grant) => grant?.connectionId)).toEqual(processes.map((_, index) => `ac_key${index}`));
    const keyItems = (await tableItems()).filter((item) => item.pk === keys.signingKey(keyName).pk);
    expect(keyItems).toHaveLength(1);
    expect(String(keyItems[0]!.sealed_key)).toMatch(/^v1\.local\./);
  });
});
