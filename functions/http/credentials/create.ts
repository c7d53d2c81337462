import { credentials } from "#shared/composition/credentials.ts";
import { createCredentialBody } from "#shared/http/credential-schemas.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { created } from "#shared/http/responses.ts";

export const handler = httpHandler(credentials, { body: createCredentialBody }, async (request, core) =>
  created(await core.create(request.org, request.body)),
);
