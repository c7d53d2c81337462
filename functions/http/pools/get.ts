import { poolRecords } from "#shared/composition/pool-records.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(poolRecords, { params: idOrNameParams }, async (request, core) => ok(await core.get(request.org, request.params.id_or_name)));
