import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maxDecompressedArchiveBytes } from "#shared/archive/validate.ts";
import { archives } from "#shared/composition/archives.ts";
import { workflowTiming } from "#shared/composition/config.ts";
import { profileSessions } from "#shared/composition/profile-sessions.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import { profileStore } from "#shared/composition/table.ts";
import { healthCheckCore, type HealthCheckTaskInput } from "#shared/domain/health-checks.ts";
import type { LoginEngine } from "#shared/login/types.ts";
import { aProfileArchiveBomb, aStorageState } from "../support/archive-builders.ts";
import { loggedInUnderTestExecution, servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let bomb: Buffer;

beforeAll(async () => {
  core = await servicesOnFreshTable();
  bomb = await aProfileArchiveBomb(1024 * 1024 * 1024);
});

afterAll(async () => {
  await core?.stack.stop();
});

/** The engine is never asked: a session that cannot be read has nothing to probe with. */
const unaskedEngine: Pick<LoginEngine, "probe"> = {
  probe: async () => {
    throw new Error("the check probed the site with a session it should not have read");
  },
};

/** A logged-in connection whose profile holds `archive`, put straight into the store as an import before the cap stored it. */
async function connectionWithStoredArchive(org: string, archive: Buffer) {
  const created = await core.connections.create(org, { domain: "cap.example.com", profile_name: "p", health_checks: false });
  const record = (await core.connectionStore.get(org, created.id))!;
  await archives(core.config).put(org, record.profile_id, "tar.zst", archive);
  await profileStore(core.config).setArchive(org, record.profile_id, { kind: "tar.zst", size: archive.length, saved_at: new Date().toISOString() });
  const executionId = await loggedInUnderTestExecution(core, org, created.id, { post_login_url: "https://cap.example.com/dashboard" });
  const input: HealthCheckTaskInput = { org, connection_id: created.id, generation: 0, iteration: 0, execution_id: executionId, execution_started_at: new Date().toISOString() };
  return { id: created.id, profileId: record.profile_id, input };
}

describe("a stored profile archive that decompresses past the cap", () => {
  it("fails the health check with profile_archive_too_large, naming the limit", async () => {
    const org = uniqueOrg();
    const connection = await connectionWithStoredArchive(org, bomb);
    const checks = healthCheckCore({
      connections: core.connectionStore,
      engine: unaskedEngine,
      sessions: profileSessions(core.config),
      timing: workflowTiming(core.config),
      timelineRetentionDays: core.config.TIMELINE_RETENTION_DAYS,
      secrets: secretBox(core.config),
    });

    await checks.healthCheck(connection.input);
    const checked = await core.connections.get(org, connection.id);
    const timeline = await core.connections.timeline(org, connection.id, { type: "health_check", limit: 10, offset: 0 });

    expect(checked).toMatchObject({ status: "NEEDS_AUTH" });
    expect(timeline.items).toEqual([
      expect.objectContaining({
        type: "health_check",
        status: "NEEDS_AUTH",
        error_code: "profile_archive_too_large",
        error_message: `the profile's saved session cannot be used: the archive is larger than the ${maxDecompressedArchiveBytes} byte limit once decompressed`,
      }),
    ]);
  });

  it("is replaced by the next login's session", async () => {
    const org = uniqueOrg();
    const connection = await connectionWithStoredArchive(org, bomb);
    const sessions = profileSessions(core.config);

    const saved = await sessions.save(org, { id: connection.profileId, name: "p" }, ["cap.example.com"], aStorageState());

    expect(saved).toBe(true);
    expect((await sessions.load(org, connection.profileId))?.state).toEqual(aStorageState());
  });
});
