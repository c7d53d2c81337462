import { isIP } from "node:net";
import { parse } from "tldts";

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
export function isWithin(host: string, domain: string): boolean {
  return host === domain || (isIP(domain) === 0 && host.endsWith(`.${domain}`));
}

/** A host or domain name by the public-suffix list, its private section included (one site per `*.github.io` name). */
function parsedName(name: string) {
  return parse(name.toLowerCase(), { allowPrivateDomains: true });
}

/**
 * Whether a credential saved for `domain` may be typed on a page of `host`: the host is the domain
 * or one of its subdomains, under the same registrable domain (the public-suffix list with its
 * private section), so a credential is never typed on a sibling site under a shared suffix. An IP
 * literal only matches itself.
 */
export function credentialFitsHost(domain: string, host: string): boolean {
  const site = parsedName(domain);
  const page = parsedName(host);
  if (site.hostname === null || page.hostname === null) return false;
  if (site.isIp || page.isIp) return site.hostname === page.hostname;
  return isWithin(page.hostname, site.hostname) && page.domain === site.domain;
}

/** `a` and `b` belong to one registrable domain (an IP literal, or a bare `localhost`, only to itself). */
export function sameSite(a: string, b: string): boolean {
  const first = parsedName(a);
  const second = parsedName(b);
  if (first.domain === null || second.domain === null) return first.hostname !== null && first.hostname === second.hostname;
  return first.domain === second.domain;
}

/** A domain of one of the known identity providers (`accounts.google.com`, `acme.okta.com`, `google.com`). */
export function isSsoProviderDomain(domain: string): boolean {
  return knownSsoProviders.some(({ hosts, suffixes }) => [...hosts, ...suffixes].some((known) => sameSite(domain, known)));
}

/** Why a stored credential saved for `domain` must not be typed on, or sent to, `url`; null when it may. */
export function credentialHostRefusal(domain: string, url: URL): string | null {
  const host = hostOf(url);
  if (credentialFitsHost(domain, host)) return null;
  return `the stored credential saved for ${domain} is not typed on or sent to ${host}, which is outside that domain`;
}

/** What the deployment allows beyond the public web's rules, for targets and for what the engine reaches. */
export interface TargetPolicy {
  /** Local mode allows `localhost`, IP literals and any port, so test sites on 127.0.0.1 can be targets. */
  allowPrivateTargets: boolean;
}

const webPorts = new Set(["80", "443"]);

/**
 * Why this deployment must not send a request to `url`'s port, or null when it may. A deployment
 * that reaches only public sites talks to the web's own ports, not to whatever else a public host
 * exposes (an admin console, a database, a mail server).
 */
export function portRefusal(url: URL, policy: TargetPolicy): string | null {
  // URL leaves `port` empty when it is the scheme's default (80 for http, 443 for https).
  if (policy.allowPrivateTargets || url.port === "" || webPorts.has(url.port)) return null;
  return `port ${url.port} is not 80 or 443, the only ports this deployment connects to`;
}

/** The domains a login may go to besides the known SSO providers: a login target's, in its own words. */
export interface TargetDomains {
  domain: string;
  allowedDomains: string[];
}

/** Why the engine must not request `url` for this target, or null when it may. */
export function scopeRefusal(url: URL, target: TargetDomains, policy: TargetPolicy): string | null {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${url.protocol} links are not followed`;
  const portProblem = portRefusal(url, policy);
  if (portProblem) return `${url.host}: ${portProblem}`;
  const host = hostOf(url);
  const domains = [target.domain, ...target.allowedDomains].map((domain) => domain.toLowerCase());
  if (domains.some((domain) => isWithin(host, domain)) || ssoProviderOfHost(host)) return null;
  return `${host} is outside the connection's domain, its allowed_domains and the known SSO providers (add it to allowed_domains to allow it)`;
}

/** The URL's host without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}
