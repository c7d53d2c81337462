import { pools } from "#shared/composition/pools.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { noContent } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(pools, { params: idOrNameParams }, async (request, core) => {
  await core.flush(request.org, request.params.id_or_name);
  return noContent();
});
