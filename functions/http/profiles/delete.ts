import { profileArchives } from "#shared/composition/profile-archives.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { noContent } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(profileArchives, { params: idOrNameParams }, async (request, core) => {
  await core.remove(request.org, request.params.id_or_name);
  return noContent();
});
