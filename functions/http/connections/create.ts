import { connectionLifecycle } from "#shared/composition/connection-lifecycle.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { created } from "#shared/http/responses.ts";
import { createConnectionBody } from "#shared/http/schemas.ts";

export const handler = httpHandler(connectionLifecycle, { body: createConnectionBody }, async (request, core) =>
  created(await core.create(request.org, request.body)),
);
