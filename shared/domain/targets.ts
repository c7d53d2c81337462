import { isIP } from "node:net";
import { BadRequestError } from "./errors.ts";

export interface TargetPolicy {
  /** Local mode allows `localhost` and IP literals so test sites on 127.0.0.1 can be targets. */
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
  if (labels.length < 2 || !labels.every((label) => hostLabel.test(label))) {
    fail(`'${raw}' is not a valid host name`);
  }
  return domain;
}
