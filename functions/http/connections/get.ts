import { connections } from "#shared/composition/connections.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(connections, { params: idParams, handoffToken: true }, async (request, core) =>
  ok(await core.get(request.org, request.params.id)),
);
