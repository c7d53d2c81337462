import { submissions } from "#shared/composition/submissions.ts";
import { httpHandler } from "#shared/http/handler.ts";
import { json } from "#shared/http/responses.ts";
import { idParams, submitBody } from "#shared/http/schemas.ts";

export const handler = httpHandler(submissions, { params: idParams, body: submitBody, handoffToken: true }, async (request, core) =>
  json(202, await core.submit(request.org, request.params.id, request.body)),
);
