import { pools } from "#shared/composition/pools.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { createPoolBody } from "#shared/http/pool-schemas.ts";
import { created } from "#shared/http/responses.ts";

export const handler = httpHandler(pools, { body: createPoolBody }, async (request, core) => created(await core.create(request.org, request.body)));
