import { credentialRecords } from "#shared/composition/credential-records.ts";
import { listCredentialsQuery } from "#shared/http/credential-schemas.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { page } from "#shared/http/responses.ts";

export const handler = httpHandler(credentialRecords, { query: listCredentialsQuery }, async (request, core) => {
  const result = await core.list(request.org, request.query);
  return page(result.items, result.hasMore, request.query.offset, request.query.limit);
});
