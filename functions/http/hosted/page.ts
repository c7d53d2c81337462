import * as z from "zod/mini";
import { hostedLoginPage, hostedLoginPageHeaders } from "#shared/composition/hosted-login.ts";
import { anonymousHttpHandler } from "#shared/http/handler.ts";
import { headerValue } from "#shared/http/headers.ts";
import { idParams } from "#shared/http/schemas.ts";

/**
 * Only the redirects are read here: the code is the page script's to exchange, and other parameters
 * are the caller's. A redirect that cannot be followed (too long, not a URL) is refused on the page.
 */
const pageQuery = z.object({ success_url: z.optional(z.string()), error_url: z.optional(z.string()) });

export const handler = anonymousHttpHandler(
  hostedLoginPage,
  { params: idParams, query: pageQuery },
  async (request, core) => ({
    statusCode: 200,
    headers: { "content-type": "text/html; charset=utf-8" },
    body: core.page({ acceptLanguage: headerValue(request.headers, "accept-language"), ...request.query }).html,
  }),
  { everyAnswer: () => hostedLoginPageHeaders() },
);
