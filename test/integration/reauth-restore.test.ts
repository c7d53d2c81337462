import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentials } from "#shared/composition/credentials.ts";
import type { Connection } from "#shared/domain/connection.ts";
import { reauthStopped } from "#shared/domain/reauth-safety.ts";
import { servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;

beforeAll(async () => {
  core = await servicesOnFreshTable();
});

afterAll(async () => {
  await core?.stack.stop();
});

/** A connection whose re-auth the site stopped by rejecting `credentialId`, as the Reauth task leaves it. */
async function stoppedConnection(org: string, domain: string, credentialName: string, credentialId: string): Promise<Connection> {
  const created = await core.connections.create(org, { domain, profile_name: "p", credential: { name: credentialName }, health_checks: false });
  const record = (await core.connectionStore.get(org, created.id))!;
  const loggedIn = { ...record, can_reauth: true, can_reauth_reason: "requirements_satisfiable" };
  return (await core.connectionStore.guardedUpdate(org, created.id, { executionArn: record.execution_arn! }, {
    status: "NEEDS_AUTH",
    ...reauthStopped(loggedIn, credentialId),
  }))!;
}

describe("a re-auth stopped by a rejected credential", () => {
  it("may try again once that credential is updated, with the reason the last login gave", async () => {
    const org = uniqueOrg();
    const credential = await credentials(core.config).create(org, { name: "shop", domain: "shop.example.com", values: { identifier: "ada", password: "old" } });
    const stopped = await stoppedConnection(org, "shop.example.com", "shop", credential.id);
    const other = await core.connections.create(org, { domain: "other.example.com", profile_name: "p", health_checks: false });
    expect(stopped).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_external_action" });

    await credentials(core.config).update(org, "shop", { values: { password: "new" } });

    expect(await core.connections.get(org, stopped.id)).toMatchObject({ can_reauth: true, can_reauth_reason: "requirements_satisfiable" });
    expect((await core.connectionStore.get(org, stopped.id))?.reauth_rejected_credential).toBeNull();
    expect(await core.connections.get(org, other.id)).toMatchObject({ can_reauth: false, can_reauth_reason: "no_prior_successful_login" });
  });

  it("may try again once another credential is linked, and stays stopped when the link is removed", async () => {
    const org = uniqueOrg();
    const relinked = await stoppedConnection(org, "a.example.com", "first", "cr_first");
    const unlinked = await stoppedConnection(org, "b.example.com", "first", "cr_first");

    const afterRelink = await core.connections.update(org, relinked.id, { credential: { name: "second" } });
    const afterUnlink = await core.connections.update(org, unlinked.id, { credential: null });

    expect(afterRelink).toMatchObject({ can_reauth: true, can_reauth_reason: "requirements_satisfiable", credential: { name: "second" } });
    expect(afterUnlink).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_external_action", credential: null });
  });
});
