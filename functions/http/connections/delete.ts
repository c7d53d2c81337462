import { connectionLifecycle } from "#shared/composition/connection-lifecycle.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { noContent } from "#shared/http/responses.ts";
import { idParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(connectionLifecycle, { params: idParams }, async (request, core) => {
  await core.remove(request.org, request.params.id);
  return noContent();
});
