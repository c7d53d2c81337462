import * as z from "zod/mini";
import { profileArchives } from "#shared/composition/profile-archives.ts";
import { streamingHttpHandler } from "#shared/http/handler.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = streamingHttpHandler(
  profileArchives,
  { params: idOrNameParams, query: z.object({ format: z.optional(z.string()) }) },
  async (request, core) => {
    const download = await core.download(request.org, request.params.id_or_name, request.query.format);
    return {
      statusCode: 200,
      headers: { "content-type": download.contentType, "content-disposition": `attachment; filename="${download.filename}"` },
      stream: download.body,
    };
  },
);
