import { profileImport } from "#shared/composition/profile-import.ts";
import { archiveUploadLimitBytes } from "#shared/limits.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { idOrNameParams } from "#shared/http/schemas.ts";

export const handler = httpHandler(profileImport, { params: idOrNameParams, rawBodyLimit: archiveUploadLimitBytes }, async (request, core) =>
  ok(await core.importArchive(request.org, request.params.id_or_name, request.raw.contentType, request.raw.bytes)),
);
