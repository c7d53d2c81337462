import type { StorageState } from "../archive/storage-state.ts";
import type { LoginEngine, LoginEngineKind, ProbeOutcome, SessionEvidence } from "../login/types.ts";
import type { Connection } from "./connection.ts";
import { loginTarget } from "./flows/step.ts";

/**
 * Which engine asks the site whether a saved session works, and what a check does when its engine
 * cannot tell. The rule is written out in docs/login-engines.md.
 */

/** Checks in a row that could not tell, after which a check asks the other engine too. */
export const inconclusiveChecksBeforeOtherEngine = 3;

const engineWords: Record<LoginEngineKind, string> = { http: "over HTTP", browser: "in the browser" };

/**
 * The engine a check asks first: where the evidence tells, the engine whose view of the page it
 * describes; where it cannot, the browser, since a page the same in its served HTML with and without
 * the session (an app shell) may draw the difference by script. Without evidence (a login from before
 * it was learnt), the engine that logged in.
 */
export function checkEngine(connection: Pick<Connection, "login_engine">, evidence: SessionEvidence | null): LoginEngineKind {
  const loginEngine = connection.login_engine ?? "http";
  if (evidence === null) return loginEngine;
  if (evidence.basis === "unverifiable") return "browser";
  return evidence.engine ?? loginEngine;
}

export interface EngineCheck {
  probe: ProbeOutcome;
  /** The engine whose answer `probe` is. */
  checkedWith: LoginEngineKind;
  /** Set when the check asked the other engine after checks that could not tell: says so. */
  note: string | null;
  /** The record's new count of checks in a row that could not tell. */
  inconclusiveChecks: number;
}

/**
 * Asks `checkEngine`'s engine; when that cannot tell for the `inconclusiveChecksBeforeOtherEngine`th
 * check in a row, asks the other engine as well and takes its answer. The count starts again after
 * that try, so a page neither engine can tell costs the second engine's look every few checks only.
 */
export async function checkWithEngines(
  engine: Pick<LoginEngine, "probe">,
  connection: Connection & { post_login_url: string },
  session: StorageState,
  evidence: SessionEvidence | null,
): Promise<EngineCheck> {
  const ask = (kind: LoginEngineKind, state: StorageState) => engine.probe({ ...loginTarget(connection), engine: kind }, state, connection.post_login_url, evidence);
  const first = checkEngine(connection, evidence);
  const probe = await ask(first, session);
  if (probe.state !== "inconclusive") return { probe, checkedWith: first, note: null, inconclusiveChecks: 0 };
  const inARow = (connection.inconclusive_checks ?? 0) + 1;
  if (inARow < inconclusiveChecksBeforeOtherEngine) return { probe, checkedWith: first, note: null, inconclusiveChecks: inARow };
  const other: LoginEngineKind = first === "http" ? "browser" : "http";
  // The first look may have renewed the session (a rotated token): the second sends the renewal, and
  // hands it back when it renews nothing itself, so the save-back keeps it.
  const renewed = probe.session ?? session;
  const second = await ask(other, renewed);
  const lastSession = second.state === "logged_in" || second.state === "inconclusive" ? { session: second.session ?? renewed } : {};
  return {
    probe: { ...second, ...lastSession },
    checkedWith: other,
    note: `${inARow} checks in a row could not tell ${engineWords[first]} whether the session works: this one asked ${engineWords[other]}`,
    inconclusiveChecks: 0,
  };
}
