import { replaysCore, type ReplayBlobStore } from "../domain/replays.ts";
import { perConfig } from "./config.ts";
import { connectionStore } from "./table.ts";

/** The replay store, its S3 client built at its first call (as the profile archives' is: archives.ts). */
const replayStore = perConfig((config): ReplayBlobStore => {
  let loaded: Promise<ReplayBlobStore> | undefined;
  const store = () => (loaded ??= import("./s3-archives.ts").then(({ s3Replays }) => s3Replays(config)));
  return {
    put: async (org, connectionId, replayId, zip) => (await store()).put(org, connectionId, replayId, zip),
    open: async (org, connectionId, replayId) => (await store()).open(org, connectionId, replayId),
  };
});

export const replays = perConfig((config) => replaysCore({ connections: connectionStore(config), replays: replayStore(config) }));
