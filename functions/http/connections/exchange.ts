import * as z from "zod/mini";
import { handoff } from "#shared/composition/handoff.ts";
import { anonymousHttpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idParams } from "#shared/http/schemas.ts";

const exchangeBody = z.object({ code: z.string().check(z.minLength(1), z.maxLength(256)) });

export const handler = anonymousHttpHandler(handoff, { params: idParams, body: exchangeBody }, async (request, core) =>
  ok(await core.exchange(request.params.id, request.body.code)),
);
