import * as z from "zod";
import { profiles } from "#shared/composition/profiles.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { page } from "#shared/http/responses.ts";
import { nameSchema, paginationQuery } from "#shared/http/schemas.ts";

const query = z.object({ name: nameSchema.optional(), query: z.string().min(1).max(255).optional(), ...paginationQuery });

export const handler = httpHandler(profiles, { query }, async (request, core) => {
  const result = await core.list(request.org, request.query);
  return page(result.items, result.hasMore, request.query.offset, request.query.limit);
});
