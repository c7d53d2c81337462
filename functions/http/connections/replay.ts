import * as z from "zod/mini";
import { replays } from "#shared/composition/replays.ts";
import { replayIdPattern } from "#shared/domain/replays.ts";
import { streamingHttpHandler } from "#shared/http/handler.ts";
import { idParams } from "#shared/http/schemas.ts";

const params = z.object({
  ...idParams.shape,
  replay_id: z.string().check(z.regex(replayIdPattern, "must be a replay id as a timeline event's replay_id names it (rp_ and 20 letters or digits)")),
});

export const handler = streamingHttpHandler(replays, { params }, async (request, core) => {
  const replay = await core.download(request.org, request.params.id, request.params.replay_id);
  return {
    statusCode: 200,
    headers: { "content-type": replay.contentType, "content-length": String(replay.size), "content-disposition": `attachment; filename="${replay.filename}"` },
    stream: replay.body,
  };
});
