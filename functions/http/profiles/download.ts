import * as z from "zod";
import { streamingHttpHandler } from "#shared/http/handler.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = streamingHttpHandler(
  { params: idOrNameParams, query: z.object({ format: z.string().optional() }) },
  async (request, core) => {
    const download = await core.profiles.download(request.org, request.params.id_or_name, request.query.format);
    return {
      statusCode: 200,
      headers: { "content-type": download.contentType, "content-disposition": `attachment; filename="${download.filename}"` },
      stream: download.body,
    };
  },
);
