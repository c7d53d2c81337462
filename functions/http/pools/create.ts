import { poolRecords } from "#shared/composition/pool-records.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { createPoolBody } from "#shared/http/pool-schemas.ts";
import { created } from "#shared/http/responses.ts";

export const handler = httpHandler(poolRecords, { body: createPoolBody }, async (request, core) => created(await core.create(request.org, request.body)));
