import { chooseLanguage, hostedLoginStrings } from "./strings.ts";
import type { PageTemplate } from "./page-document.ts";
import { resolveRedirects, type RedirectOrigins } from "./redirects.ts";

export interface HostedPageDeps {
  template: PageTemplate;
  redirectOrigins: RedirectOrigins;
}

export interface HostedPageRequest {
  acceptLanguage: string | undefined;
  success_url?: string;
  error_url?: string;
}

/**
 * What every answer of the page's route carries, its errors included. `frameAncestors`: the CSP
 * `frame-ancestors` sources, who may show the page in a frame.
 */
export function pageSecurityHeaders(frameAncestors: string): Record<string, string> {
  // The script, style and the API the script calls are on this origin; nothing else is loaded.
  const contentSecurityPolicy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join("; ");
  return {
    "content-security-policy": contentSecurityPolicy,
    // The handoff code is in the page's URL: no request from the page may carry it elsewhere.
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
}

/**
 * The hosted login page. It does not look at the handoff code: the page's script exchanges it, so
 * the page itself gives nothing away and any connection id gets the same document.
 */
export function hostedPageCore(deps: HostedPageDeps) {
  return {
    page(request: HostedPageRequest): { html: string } {
      const lang = chooseLanguage(request.acceptLanguage);
      const strings = hostedLoginStrings[lang] ?? hostedLoginStrings.en!;
      const redirect = resolveRedirects(request, deps.redirectOrigins);
      return { html: deps.template.render(lang, { strings, redirect }) };
    },
  };
}
