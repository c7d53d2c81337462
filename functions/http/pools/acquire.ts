import { httpHandler } from "#shared/http/handler.ts";
import { acquireBody } from "#shared/http/pool-schemas.ts";
import { noContent, ok } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler({ params: idOrNameParams, body: acquireBody }, async (request, core) => {
  const session = await core.pools.acquire(request.org, request.params.id_or_name, request.body.acquire_timeout_seconds);
  return session ? ok(session) : noContent();
});
