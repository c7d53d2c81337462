import { credentialRecords } from "#shared/composition/credential-records.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { noContent } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(credentialRecords, { params: idOrNameParams }, async (request, core) => {
  await core.remove(request.org, request.params.id_or_name);
  return noContent();
});
