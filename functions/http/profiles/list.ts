import * as z from "zod/mini";
import { profiles } from "#shared/composition/profiles.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { page } from "#shared/http/responses.ts";
import { nameSchema, paginationQuery } from "#shared/http/schemas.ts";

const query = z.object({ name: z.optional(nameSchema), query: z.optional(z.string().check(z.minLength(1), z.maxLength(255))), ...paginationQuery });

export const handler = httpHandler(profiles, { query }, async (request, core) => {
  const result = await core.list(request.org, request.query);
  return page(result.items, result.hasMore, request.query.offset, request.query.limit);
});
