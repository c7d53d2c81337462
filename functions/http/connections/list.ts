import * as z from "zod/mini";
import { connections } from "#shared/composition/connections.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { page } from "#shared/http/responses.ts";
import { nameSchema, paginationQuery } from "#shared/http/schemas.ts";

const query = z.object({
  profile_name: z.optional(nameSchema),
  domain: z.optional(z.string().check(z.minLength(1), z.maxLength(253))),
  query: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
  ...paginationQuery,
});

export const handler = httpHandler(connections, { query }, async (request, core) => {
  const result = await core.list(request.org, request.query);
  return page(result.items, result.hasMore, request.query.offset, request.query.limit);
});
