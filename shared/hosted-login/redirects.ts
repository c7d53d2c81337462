/**
 * Where the hosted login page may send the user when the flow ends. The caller appends
 * `success_url` and `error_url` to `hosted_url`; anyone can edit a link, so only http(s) URLs on an
 * origin the operator listed are followed, and the service is no open redirect.
 */

/** The origins a redirect may go to: those listed, or (local mode's default) any loopback origin. */
export type RedirectOrigins = { kind: "listed"; origins: readonly string[] } | { kind: "loopback" };

/**
 * Why a redirect is not followed, as a key of the page's `redirectRefusedReasons` strings: not an
 * absolute URL (or longer than any link should be), not http(s), or an origin not allowed.
 */
export type RedirectRefusal = "invalid" | "scheme" | "origin";

/** What the page may follow at each end, and why a URL it was given for that end is not followed. */
export interface ResolvedRedirects {
  success: string | null;
  successRefused: RedirectRefusal | null;
  error: string | null;
  errorRefused: RedirectRefusal | null;
}

/** Longer than this is no link a caller means; browsers and proxies start cutting URLs about here. */
export const maxRedirectLength = 2048;

const loopbackHosts = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** `REDIRECT_ORIGINS` as configured; unset means none in AWS and loopback in local mode (`npm start`). */
export function redirectOrigins(configured: readonly string[] | undefined, mode: "aws" | "local"): RedirectOrigins {
  if (configured !== undefined) return { kind: "listed", origins: configured };
  return mode === "local" ? { kind: "loopback" } : { kind: "listed", origins: [] };
}

/** The URL to follow, or why it is refused. */
export function checkRedirect(value: string, allowed: RedirectOrigins): { url: string } | { refused: RedirectRefusal } {
  if (value.length > maxRedirectLength || !URL.canParse(value)) return { refused: "invalid" };
  const url = new URL(value);
  if (url.protocol !== "http:" && url.protocol !== "https:") return { refused: "scheme" };
  const listed = allowed.kind === "loopback" ? loopbackHosts.has(url.hostname) : allowed.origins.includes(url.origin);
  return listed ? { url: url.href } : { refused: "origin" };
}

/** Both redirects of a page request, each checked on its own; an absent one is null, and refused by nothing. */
export function resolveRedirects(query: { success_url?: string; error_url?: string }, allowed: RedirectOrigins): ResolvedRedirects {
  const success = resolveOne(query.success_url, allowed);
  const error = resolveOne(query.error_url, allowed);
  return { success: success.url, successRefused: success.refused, error: error.url, errorRefused: error.refused };
}

function resolveOne(value: string | undefined, allowed: RedirectOrigins): { url: string | null; refused: RedirectRefusal | null } {
  if (!value) return { url: null, refused: null };
  const checked = checkRedirect(value, allowed);
  return "url" in checked ? { url: checked.url, refused: null } : { url: null, refused: checked.refused };
}
