import { isIP } from "node:net";
import { parse } from "tldts";
import { portRefusal } from "./scope.ts";
import { BadRequestError } from "../domain/errors.ts";

export interface TargetPolicy {
  /** Local mode allows `localhost`, IP literals and any port, so test sites on 127.0.0.1 can be targets. */
  allowPrivateTargets: boolean;
}

const hostLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Turns a user-given domain into the canonical lower-cased host name, or explains in a 400 why it
 * is not one. `field` names the request field in the error.
 */
export function normalizeDomain(raw: string, field: string, policy: TargetPolicy): string {
  const domain = raw.trim().toLowerCase();
  const fail = (why: string) => {
    throw new BadRequestError(`${field}: ${why}`, [{ code: field, message: why }]);
  };
  if (domain.length === 0) fail("must not be empty");
  if (domain.length > 253) fail("must be at most 253 characters");
  if (isIP(domain) !== 0 || domain === "localhost") {
    if (!policy.allowPrivateTargets) fail(`'${raw}' is an IP address or localhost, which this deployment does not allow`);
    return domain;
  }
  if (/[/:?#@\s]/.test(domain)) fail(`'${raw}' is not a bare host name: give it without scheme, port or path`);
  const labels = domain.split(".");
  if (!labels.every((label) => hostLabel.test(label))) fail(`'${raw}' is not a valid host name`);
  if (isPublicSuffix(domain)) {
    fail(`'${raw}' is a public suffix, under which anyone can register sites: give one site's domain, such as example.${domain}`);
  }
  if (labels.length < 2) fail(`'${raw}' is not a valid host name`);
  return domain;
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

/** Refuses with a 400 a `login_url` the login engine would never request in this deployment. */
export function checkLoginUrl(raw: string, policy: TargetPolicy): void {
  const why = portRefusal(new URL(raw), policy);
  if (why) throw new BadRequestError(`login_url: ${why}`, [{ code: "login_url", message: why }]);
}
