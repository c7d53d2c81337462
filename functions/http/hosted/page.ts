import * as z from "zod/mini";
import { hostedLoginPage } from "#shared/composition/hosted-login.ts";
import { anonymousHttpHandler } from "#shared/http/handler.ts";
import { headerValue } from "#shared/http/headers.ts";
import { idParams } from "#shared/http/schemas.ts";

const redirectParam = z.optional(z.string().check(z.maxLength(2048, "must be at most 2048 characters")));

/** Only the redirects are read here: the code is the page script's to exchange, and other parameters are the caller's. */
const pageQuery = z.object({ success_url: redirectParam, error_url: redirectParam });

export const handler = anonymousHttpHandler(hostedLoginPage, { params: idParams, query: pageQuery }, async (request, core) => {
  const page = core.page({ acceptLanguage: headerValue(request.headers, "accept-language"), ...request.query });
  return {
    statusCode: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": page.contentSecurityPolicy,
      // The handoff code is in the page's URL: no request from the page may carry it elsewhere.
      "referrer-policy": "no-referrer",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
    body: page.html,
  };
});
