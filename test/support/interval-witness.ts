import { randomBytes } from "node:crypto";
import type Kernel from "@onkernel/sdk";
import { eventually } from "./poll.ts";

/**
 * A connection checked every 300 s beside the ones under test. Every execution waits on the same
 * scaled clock, so its checks count the intervals that pass: a test waits for them, not for a time,
 * before saying something did *not* happen in those intervals.
 */
export async function intervalWitness(client: Kernel) {
  const witness = await client.auth.connections.create({ domain: "witness.example.com", profile_name: `witness-${randomBytes(4).toString("hex")}`, health_check_interval: 300 });
  // Newest first: the page holds the newest checks, so counting those after a mark needs no more.
  const newestChecks = async () =>
    (await client.auth.connections.timeline(witness.id, { type: "health_check", limit: 100 })).getPaginatedItems().map((check) => check.id);
  return {
    id: witness.id,
    /** Resolves once `intervals` whole intervals have passed (the first check counted may come at once). */
    async intervalsPass(intervals: number): Promise<void> {
      const mark = (await newestChecks())[0];
      const checksSinceMark = async () => {
        const ids = await newestChecks();
        const index = mark === undefined ? -1 : ids.indexOf(mark);
        return index === -1 ? ids.length : index;
      };
      await eventually(async () => ((await checksSinceMark()) >= intervals + 1 ? true : undefined), `${intervals} more intervals of the witness`);
    },
    remove: () => client.auth.connections.delete(witness.id),
  };
}
