import { pools } from "#shared/composition/pools.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { deletePoolBody } from "#shared/http/pool-schemas.ts";
import { noContent } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(pools, { params: idOrNameParams, body: deletePoolBody }, async (request, core) => {
  await core.remove(request.org, request.params.id_or_name, request.body.force ?? false);
  return noContent();
});
