import { pools } from "#shared/composition/pools.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { updatePoolBody } from "#shared/http/pool-schemas.ts";
import { ok } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(pools, { params: idOrNameParams, body: updatePoolBody }, async (request, core) =>
  ok(await core.update(request.org, request.params.id_or_name, request.body)),
);
