import { loginRoutes } from "#shared/composition/login-routes.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idParams, loginBody } from "#shared/http/schemas.ts";

export const handler = httpHandler(loginRoutes, { params: idParams, body: loginBody }, async (request, core) =>
  ok(await core.login(request.org, request.params.id, request.baseUrl)),
);
