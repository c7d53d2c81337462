import * as z from "zod/mini";
import { hostedLoginAssetFiles } from "#shared/composition/hosted-login.ts";
import { anonymousHttpHandler } from "#shared/http/handler.ts";

const assetParams = z.object({ file: z.string().check(z.minLength(1), z.maxLength(64)) });

export const handler = anonymousHttpHandler(hostedLoginAssetFiles, { params: assetParams }, async (request, core) => {
  const asset = await core.asset(request.params.file);
  return {
    statusCode: 200,
    // Not versioned by name: a short cache picks up a new deployment soon.
    headers: { "content-type": asset.contentType, "x-content-type-options": "nosniff", "cache-control": "public, max-age=300" },
    body: asset.body,
  };
});
