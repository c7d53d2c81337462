import type { TargetPolicy } from "../policy/scope.ts";
import { canonicalDomain, loginUrlRefusal } from "../policy/targets.ts";
import { BadRequestError } from "./errors.ts";

/** A target policy's refusal of a request field, as the 400 that names the field. */
function refusedField(field: string, why: string): BadRequestError {
  return new BadRequestError(`${field}: ${why}`, [{ code: field, message: why }]);
}

/** The canonical host name of a user-given domain, or a 400 naming `field` and why it is not one. */
export function normalizeDomain(raw: string, field: string, policy: TargetPolicy): string {
  const verdict = canonicalDomain(raw, policy);
  if ("refusal" in verdict) throw refusedField(field, verdict.refusal);
  return verdict.domain;
}

/** Refuses with a 400 a `login_url` the login engine would never request in this deployment. */
export function checkLoginUrl(raw: string, policy: TargetPolicy): void {
  const why = loginUrlRefusal(raw, policy);
  if (why) throw refusedField("login_url", why);
}
