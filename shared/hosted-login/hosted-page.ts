import { chooseLanguage, hostedLoginStrings } from "./strings.ts";
import type { PageTemplate } from "./page-document.ts";
import { resolveRedirects, type RedirectOrigins } from "./redirects.ts";

export interface HostedPageDeps {
  template: PageTemplate;
  redirectOrigins: RedirectOrigins;
  /** CSP `frame-ancestors` sources: who may show the page in a frame. */
  frameAncestors: string;
}

export interface HostedPageRequest {
  acceptLanguage: string | undefined;
  success_url?: string;
  error_url?: string;
}

/**
 * The hosted login page. It does not look at the handoff code: the page's script exchanges it, so
 * the page itself gives nothing away and any connection id gets the same document.
 */
export function hostedPageCore(deps: HostedPageDeps) {
  // The script, style and the API the script calls are on this origin; nothing else is loaded.
  const contentSecurityPolicy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${deps.frameAncestors}`,
  ].join("; ");

  return {
    page(request: HostedPageRequest): { html: string; contentSecurityPolicy: string } {
      const lang = chooseLanguage(request.acceptLanguage);
      const strings = hostedLoginStrings[lang] ?? hostedLoginStrings.en!;
      const redirect = resolveRedirects(request, deps.redirectOrigins);
      return { html: deps.template.render(lang, { strings, redirect }), contentSecurityPolicy };
    },
  };
}
