import type { StorageState } from "../archive/storage-state.ts";
import type { PageModel } from "./page.ts";
import { judgeWithEvidence } from "./session-evidence.ts";
import type { SessionEvidence } from "./types.ts";
import type { LoginEngineKind, ProbeOutcome } from "./types.ts";

/**
 * What an engine saw when it opened post_login_url with a saved session. The checks that cost
 * something (a parse, a settled page) are asked for only when the verdict needs them, in this order.
 */
export interface ProbeSighting {
  /** The status of the answer the engine ended at, after redirects. */
  status: number;
  /** That answer carried a Retry-After header. */
  retryAfter: boolean;
  /** post_login_url as a reason names it (host and path, never the query). */
  requestedPath: string;
  /** Why the page is what a visitor without a session gets (`refusalOf` and what else the engine saw), or null. */
  signedOutSign(): Promise<string | null>;
  /** The first of `names` (the session's cookies) that the visit deleted, or null. */
  deletedCookie(names: readonly string[]): Promise<string | null>;
  /** The page as it ended, parsed. */
  model(): Promise<PageModel>;
  /** The engine that saw it, whose view any evidence learnt here describes. */
  engine: LoginEngineKind;
  /**
   * Evidence learnt as a login learns it: this page, the same address again with the session and
   * once without; `unverifiable` when that cannot tell or the page could not be loaded again.
   */
  learn(): Promise<SessionEvidence>;
}

/** Whether a saved session still works, judged alike by both engines' health checks. */
export async function judgeProbe(seen: ProbeSighting, evidence: SessionEvidence | null): Promise<ProbeOutcome> {
  const { status } = seen;
  if (status >= 500) return { state: "unreachable", reason: `the site answered HTTP ${status}` };
  // A rate limit says nothing about the session: its state is unknown, not lost.
  if (status === 429 || (status >= 400 && seen.retryAfter)) return { state: "unreachable", reason: `the site is limiting requests (HTTP ${status})` };
  const refusal = await seen.signedOutSign();
  if (refusal) return { state: "logged_out", reason: refusal };
  // Nor does a 404 or another error answer: post_login_url may have moved.
  if (status >= 400) return { state: "unreachable", reason: `the site answered HTTP ${status} for ${seen.requestedPath}, which may have moved` };
  if (evidence === null) return { state: "logged_in" };
  const deleted = await seen.deletedCookie(evidence.sessionCookies);
  if (deleted) return { state: "logged_out", reason: `the site deleted the session cookie ${deleted}` };
  const model = await seen.model();
  const verdict = judgeWithEvidence(evidence, () => model);
  if (verdict.state !== "inconclusive") return verdict;
  // Evidence that cannot tell may come from another engine's view of the page (an app shell its script
  // draws), or from a login that could not load the page again: this engine compares the page anew.
  const learnt = await seen.learn();
  return learnt.basis === "verified" ? { state: "logged_in", evidence: { ...learnt, engine: seen.engine } } : verdict;
}

/**
 * The verdict with the session as the check left it, for the domain to save back what the site
 * renewed: only a check that found the session logged in, or saw no sign of its end, can have been
 * handed a renewal; one that found it ended, or could not ask, keeps nothing of its visit.
 */
export async function withSessionLeft(outcome: ProbeOutcome, left: () => Promise<StorageState>): Promise<ProbeOutcome> {
  if (outcome.state !== "logged_in" && outcome.state !== "inconclusive") return outcome;
  return { ...outcome, session: await left() };
}
