import { httpHandler } from "#shared/http/handler.ts";
import { created } from "#shared/http/responses.ts";
import { createConnectionBody } from "#shared/http/schemas.ts";

export const handler = httpHandler({ body: createConnectionBody }, async (request, core) =>
  created(await core.connections.create(request.org, request.body)),
);
