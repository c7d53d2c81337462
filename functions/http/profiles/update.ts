import * as z from "zod";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idOrNameParams, nameSchema } from "#shared/http/schemas.ts";

export const handler = httpHandler({ params: idOrNameParams, body: z.object({ name: nameSchema }) }, async (request, core) =>
  ok(await core.profiles.rename(request.org, request.params.id_or_name, request.body.name)),
);
