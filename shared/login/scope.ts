import { isIP } from "node:net";
import type { LoginTarget } from "./types.ts";

/** The identity providers a login may pass through without being listed in `allowed_domains`. */
const knownSsoProviders: Array<{ provider: string; hosts: string[]; suffixes: string[] }> = [
  { provider: "google", hosts: ["accounts.google.com"], suffixes: [] },
  { provider: "microsoft", hosts: ["login.microsoftonline.com", "login.live.com"], suffixes: [] },
  { provider: "okta", hosts: [], suffixes: ["okta.com", "oktapreview.com"] },
  { provider: "auth0", hosts: [], suffixes: ["auth0.com"] },
  { provider: "apple", hosts: ["appleid.apple.com"], suffixes: [] },
  { provider: "github", hosts: ["github.com"], suffixes: [] },
  { provider: "facebook", hosts: ["www.facebook.com"], suffixes: [] },
  { provider: "linkedin", hosts: ["www.linkedin.com"], suffixes: [] },
  { provider: "cognito", hosts: [], suffixes: ["amazoncognito.com"] },
  { provider: "onelogin", hosts: [], suffixes: ["onelogin.com"] },
  { provider: "ping", hosts: [], suffixes: ["pingone.com", "pingidentity.com"] },
];

/** The known identity provider serving `host` (`google`, `okta`, ...), or null. */
export function ssoProviderOfHost(host: string): string | null {
  const name = host.toLowerCase();
  const known = knownSsoProviders.find(
    ({ hosts, suffixes }) => hosts.includes(name) || suffixes.some((suffix) => name.endsWith(`.${suffix}`)),
  );
  return known?.provider ?? null;
}

/** `host` is `domain` or one of its subdomains (an IP literal only matches itself). */
function isWithin(host: string, domain: string): boolean {
  return host === domain || (isIP(domain) === 0 && host.endsWith(`.${domain}`));
}

/** Why the engine must not request `url` for this target, or null when it may. */
export function scopeRefusal(url: URL, target: LoginTarget): string | null {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${url.protocol} links are not followed`;
  const host = hostOf(url);
  const domains = [target.domain, ...target.allowedDomains].map((domain) => domain.toLowerCase());
  if (domains.some((domain) => isWithin(host, domain)) || ssoProviderOfHost(host)) return null;
  return `${host} is outside the connection's domain, its allowed_domains and the known SSO providers (add it to allowed_domains to allow it)`;
}

/** The URL's host without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}
