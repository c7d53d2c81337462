import { Readable } from "node:stream";
import { connectionEvents } from "#shared/composition/connection-events.ts";
import { streamOpener } from "#shared/domain/connection-events.ts";
import { streamingHttpHandler } from "#shared/http/handler.ts";
import { idParams } from "#shared/http/schemas.ts";

export const handler = streamingHttpHandler(connectionEvents, { params: idParams, handoffToken: true }, async (request, core) => ({
  statusCode: 200,
  headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  stream: Readable.from(await core.follow(request.org, request.params.id, request.requestId, streamOpener(request.handoffToken)), { objectMode: false }),
}));
