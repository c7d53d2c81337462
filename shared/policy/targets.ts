import { isIP } from "node:net";
import { parse } from "tldts";
import { portRefusal, type TargetPolicy } from "./scope.ts";

const hostLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A user-given domain as its canonical host name, or why it is not one. */
export type DomainVerdict = { domain: string } | { refusal: string };

/** Turns a user-given domain into the canonical lower-cased host name, or says why it is not one. */
export function canonicalDomain(raw: string, policy: TargetPolicy): DomainVerdict {
  const domain = raw.trim().toLowerCase();
  if (domain.length === 0) return { refusal: "must not be empty" };
  if (domain.length > 253) return { refusal: "must be at most 253 characters" };
  if (isIP(domain) !== 0 || domain === "localhost") {
    if (!policy.allowPrivateTargets) return { refusal: `'${raw}' is an IP address or localhost, which this deployment does not allow` };
    return { domain };
  }
  if (/[/:?#@\s]/.test(domain)) return { refusal: `'${raw}' is not a bare host name: give it without scheme, port or path` };
  const labels = domain.split(".");
  if (!labels.every((label) => hostLabel.test(label))) return { refusal: `'${raw}' is not a valid host name` };
  if (isPublicSuffix(domain)) {
    return { refusal: `'${raw}' is a public suffix, under which anyone can register sites: give one site's domain, such as example.${domain}` };
  }
  if (labels.length < 2) return { refusal: `'${raw}' is not a valid host name` };
  return { domain };
}

/**
 * A name on the public-suffix list, its private section included (`co.uk`, `com`, `github.io`):
 * a connection to it would take in every site registered under it. An unknown single label is
 * not one: it is no host name at all.
 */
function isPublicSuffix(domain: string): boolean {
  const { publicSuffix, isIcann, isPrivate } = parse(domain, { allowPrivateDomains: true, extractHostname: false });
  return publicSuffix === domain && (isIcann === true || isPrivate === true);
}

/** Why the login engine would never request this `login_url` in this deployment, or null when it may. */
export function loginUrlRefusal(raw: string, policy: TargetPolicy): string | null {
  return portRefusal(new URL(raw), policy);
}
