import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idParams } from "#shared/http/schemas.ts";

export const handler = httpHandler({ params: idParams }, async (request, core) =>
  ok(await core.connections.get(request.org, request.params.id)),
);
