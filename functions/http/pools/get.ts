import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler({ params: idOrNameParams }, async (request, core) => ok(await core.pools.get(request.org, request.params.id_or_name)));
