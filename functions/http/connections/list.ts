import * as z from "zod";
import { connections } from "#shared/composition/connections.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { page } from "#shared/http/responses.ts";
import { nameSchema, paginationQuery } from "#shared/http/schemas.ts";

const query = z.object({
  profile_name: nameSchema.optional(),
  domain: z.string().min(1).max(253).optional(),
  query: z.string().min(1).max(255).optional(),
  ...paginationQuery,
});

export const handler = httpHandler(connections, { query }, async (request, core) => {
  const result = await core.list(request.org, request.query);
  return page(result.items, result.hasMore, request.query.offset, request.query.limit);
});
