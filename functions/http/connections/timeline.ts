import * as z from "zod/mini";
import { connections } from "#shared/composition/connections.ts";
import { timelineEventTypes } from "#shared/domain/connection.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { page } from "#shared/http/responses.ts";
import { idParams, paginationQuery } from "#shared/http/schemas.ts";

const query = z.object({ type: z.optional(z.enum(timelineEventTypes)), ...paginationQuery });

export const handler = httpHandler(connections, { params: idParams, query }, async (request, core) => {
  const result = await core.timeline(request.org, request.params.id, request.query);
  return page(result.items, result.hasMore, request.query.offset, request.query.limit);
});
