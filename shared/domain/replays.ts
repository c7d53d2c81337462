import type { Readable } from "node:stream";
import { newId } from "../ids.ts";
import { existingConnection, type ConnectionStore } from "./connection.ts";
import { NotFoundError } from "./errors.ts";

/**
 * Replays: the Playwright traces of browser flows of connections that record sessions
 * (`record_session`), typed secrets masked (shared/login/browser/replay.ts). Each is kept 30 days,
 * by the bucket's lifecycle rule on `replayKeyPrefix`.
 */

/** Where replays live in the archive bucket; the infrastructure expires objects under it. */
export const replayKeyPrefix = "replays/";
export const replayRetentionDays = 30;
export const replayIdPattern = /^rp_[0-9a-hjkmnp-tv-z]{20}$/;

/** The bytes of replays, by org, connection and replay id: a replay is found only under its own connection. */
export interface ReplayBlobStore {
  put(org: string, connectionId: string, replayId: string, zip: Buffer): Promise<void>;
  open(org: string, connectionId: string, replayId: string): Promise<{ body: Readable; size: number } | undefined>;
}

export interface ReplaysDeps {
  connections: Pick<ConnectionStore, "get">;
  replays: ReplayBlobStore;
}

export function replaysCore(deps: ReplaysDeps) {
  return {
    /** Keeps a flow's trace of the connection; answers its replay id. */
    async save(org: string, connectionId: string, zip: Buffer): Promise<string> {
      const replayId = newId("rp");
      await deps.replays.put(org, connectionId, replayId, zip);
      return replayId;
    },

    async download(org: string, connectionId: string, replayId: string) {
      await existingConnection(deps.connections, org, connectionId);
      const stored = await deps.replays.open(org, connectionId, replayId);
      if (!stored) {
        throw new NotFoundError(`auth connection '${connectionId}' has no replay '${replayId}': replays are kept ${replayRetentionDays} days, under the connection whose flow made them`);
      }
      return { ...stored, contentType: "application/zip", filename: `${connectionId}-${replayId}.zip` };
    },
  };
}
