import { connections } from "#shared/composition/connections.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idParams, updateConnectionBody } from "#shared/http/schemas.ts";

export const handler = httpHandler(connections, { params: idParams, body: updateConnectionBody }, async (request, core) =>
  ok(await core.update(request.org, request.params.id, request.body)),
);
