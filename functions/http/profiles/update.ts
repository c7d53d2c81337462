import * as z from "zod/mini";
import { profiles } from "#shared/composition/profiles.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idOrNameParams, nameSchema } from "#shared/http/schemas.ts";

export const handler = httpHandler(profiles, { params: idOrNameParams, body: z.object({ name: nameSchema }) }, async (request, core) =>
  ok(await core.rename(request.org, request.params.id_or_name, request.body.name)),
);
