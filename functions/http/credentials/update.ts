import { credentials } from "#shared/composition/credentials.ts";
import { updateCredentialBody } from "#shared/http/credential-schemas.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(credentials, { params: idOrNameParams, body: updateCredentialBody }, async (request, core) =>
  ok(await core.update(request.org, request.params.id_or_name, request.body)),
);
