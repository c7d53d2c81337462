import * as z from "zod/mini";
import { poolRecords } from "#shared/composition/pool-records.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { page } from "#shared/http/responses.ts";
import { paginationQuery } from "#shared/http/schemas.ts";

export const handler = httpHandler(poolRecords, { query: z.object(paginationQuery) }, async (request, core) => {
  const result = await core.list(request.org, request.query);
  return page(result.items, result.hasMore, request.query.offset, request.query.limit);
});
