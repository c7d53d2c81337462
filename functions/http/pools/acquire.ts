import { pools } from "#shared/composition/pools.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { acquireBody } from "#shared/http/pool-schemas.ts";
import { noContent, ok } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(pools, { params: idOrNameParams, body: acquireBody }, async (request, core) => {
  const session = await core.acquire(request.org, request.params.id_or_name, request.body.acquire_timeout_seconds);
  return session ? ok(session) : noContent();
});
