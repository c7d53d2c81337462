import { pools } from "#shared/composition/pools.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { releaseBody } from "#shared/http/pool-schemas.ts";
import { noContent } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(pools, { params: idOrNameParams, body: releaseBody }, async (request, core) => {
  await core.release(request.org, request.params.id_or_name, request.body.session_id, request.body.reuse ?? true);
  return noContent();
});
