import * as z from "zod/mini";
import { profiles } from "#shared/composition/profiles.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { created } from "#shared/http/responses.ts";
import { nameSchema } from "#shared/http/schemas.ts";

export const handler = httpHandler(profiles, { body: z.object({ name: z.optional(nameSchema) }) }, async (request, core) =>
  created(await core.create(request.org, request.body)),
);
