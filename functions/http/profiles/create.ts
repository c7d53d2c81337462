import * as z from "zod";
import { httpHandler } from "#shared/http/handler.ts";
import { created } from "#shared/http/responses.ts";
import { nameSchema } from "#shared/http/schemas.ts";

export const handler = httpHandler({ body: z.object({ name: nameSchema.optional() }) }, async (request, core) =>
  created(await core.profiles.create(request.org, request.body)),
);
