import type { StorageState } from "../archive/storage-state.ts";
import type { Deadline } from "../deadline.ts";

/**
 * The contract between the login engine (shared/login) and the flows that drive it (the workflow
 * tasks and routes). The engine is pure with respect to storage: every call takes the state the
 * previous call returned, so each step can run in a different Lambda.
 */

/** Where a login may go: the connection's domain, its allowed domains, and the known SSO hosts. */
export interface LoginTarget {
  domain: string;
  loginUrl: string | null;
  allowedDomains: string[];
  /**
   * The engine that logged the connection in, which its re-auths use; null before a first login. A
   * health check's target names the engine that check asks (shared/domain/check-engine.ts).
   */
  engine?: LoginEngineKind | null;
  /** The connection's `record_session`: a browser flow keeps a trace of itself (its replay). */
  recordSession?: boolean;
  /** Whose login this is: a replay is filed under it. */
  owner?: { org: string; connectionId: string };
}

/** `http`: plain requests, parsed HTML. `browser`: a real Chromium, for logins built by script. */
export const loginEngineKinds = ["http", "browser"] as const;
export type LoginEngineKind = (typeof loginEngineKinds)[number];

export const discoveredFieldTypes = ["text", "email", "password", "tel", "number", "url", "code", "totp"] as const;
export const canonicalFieldTypes = ["identifier", "password", "code", "totp_code", "totp_secret", "text"] as const;
export const choiceTypes = ["mfa_method", "sso_provider", "sign_in_method", "auth_method", "identifier_method", "account", "other"] as const;
export const mfaTypes = ["sms", "call", "email", "totp", "push", "password", "switch"] as const;
export const flowErrorCodes = [
  "credentials_invalid",
  "bot_detected",
  "captcha_blocked",
  "unsupported_auth_method",
  "site_unreachable",
  "login_form_not_found",
  "rate_limited",
  "flow_expired",
  "internal_error",
  "credential_domain_mismatch",
] as const;

export type MfaType = (typeof mfaTypes)[number];
export type FlowErrorCode = (typeof flowErrorCodes)[number];

export interface DiscoveredField {
  name: string;
  label: string;
  selector: string;
  type: (typeof discoveredFieldTypes)[number];
  placeholder?: string;
  required?: boolean;
  hint?: string;
  linked_mfa_type?: MfaType | null;
}

export interface CanonicalField {
  /** Stable id for `field_values` in a submit. */
  id: string;
  /** The name a durable value is stored under in a credential (`identifier`, `password`, ...). */
  ref: string;
  type: (typeof canonicalFieldTypes)[number];
  label?: string;
  observed_selector?: string | null;
  required?: boolean;
}

export interface Choice {
  id: string;
  label: string;
  type: (typeof choiceTypes)[number];
  description?: string | null;
  observed_selector?: string | null;
}

export interface MfaOption {
  label: string;
  type: MfaType;
  description?: string | null;
  target?: string | null;
}

export interface SignInOption {
  id: string;
  label: string;
  description?: string | null;
}

export interface PendingSsoButton {
  label: string;
  provider: string;
  selector: string;
}

/** What the page asks for, in the resource's wire shapes. */
export interface FlowPrompt {
  discovered_fields: DiscoveredField[];
  fields: CanonicalField[];
  choices: Choice[];
  mfa_options: MfaOption[];
  sign_in_options: SignInOption[];
  pending_sso_buttons: PendingSsoButton[];
  external_action_message: string | null;
}

/** The submit body of `POST /auth/connections/{id}/submit`; the flow passes it on unchanged. */
export interface Submission {
  field_values?: Record<string, string>;
  fields?: Record<string, string>;
  selected_choice_id?: string;
  mfa_option_id?: string;
  sign_in_option_id?: string;
  sso_button_selector?: string;
  sso_provider?: string;
}

/**
 * One human or machine step a successful login needed, so `can_reauth` can say whether a stored
 * credential can replay it: `sms_code`, `email_code`, `push` and `external` need a human.
 */
export type LoginRequirement = "identifier" | "password" | "totp_code" | "sms_code" | "email_code" | "push" | "external" | "choice" | "text";

/**
 * What tells a site's signed-in landing page from the same page without the session, learnt at each
 * login from two fetches of `post_login_url` with the session and one without, and looked for again
 * by every health check. Values that could name the account are kept as hashes salted per login, no
 * locator or cookie name that contains it is kept, and the whole is sealed on the connection's record.
 */
export interface SessionEvidence {
  version: 2;
  basis: SessionEvidenceBasis;
  salt: string;
  /** Shown by both signed-in fetches and not without the session: a check counts as logged in while at least one still shows. */
  signedIn: SignedInMarker[];
  /**
   * Where (element locators) the page without the session offered to sign in and the signed-in one
   * did not. Read only when no marker was learnt: an offer in one of these places means logged out.
   */
  signInPlaces: string[];
  /** Cookies the login added that stayed through both signed-in fetches: a page that deletes one has ended the session. */
  sessionCookies: string[];
  /**
   * The engine whose view of the page this describes: the served HTML (`http`) or the page as its
   * script draws it (`browser`). Absent in evidence from before it was noted: the login's engine.
   */
  engine?: LoginEngineKind;
}

/**
 * `verified`: checks look for the evidence. `unverifiable`: the page looked the same with and without
 * the session, or could not be fetched again after the login, so a check can notice a redirect to a
 * login page, a password form or 401/403, and nothing more.
 */
export const sessionEvidenceBases = ["verified", "unverifiable"] as const;
export type SessionEvidenceBasis = (typeof sessionEvidenceBases)[number];

export type SignedInMarker =
  | { kind: "sign_out" }
  /** The account's name or identifier, hashed, shown inside the element `where` names (see `locatorOf`). */
  | { kind: "account_name"; where: string; hash: string }
  /** A link to the account's own page, hashed. */
  | { kind: "account_link"; hash: string };

/**
 * What a step leaves for the next one (cookie jar, current form, hidden fields, counters): JSON that
 * only the engine that wrote it reads; the flows seal it and hand it back unchanged.
 */
export type EngineState = object;

export type StepOutcome =
  | {
      kind: "input";
      state: EngineState;
      prompt: FlowPrompt;
      /** The site's own error text (e.g. "Incorrect password") when it rejected the last step. */
      websiteError: string | null;
      /**
       * Set when a live browser holds the flow's page: the step that got this outcome keeps running
       * and answers the next submission itself, and the record shows it as `browser_session_id`.
       */
      browserSessionId?: string;
    }
  | {
      kind: "success";
      /** The session: cookies of every host the flow visited, and local storage the pages set. */
      session: StorageState;
      postLoginUrl: string;
      requirements: LoginRequirement[];
      /** Durable values entered during the flow, by credential ref (never one-time codes). */
      durableValues: Record<string, string>;
      /** The host of the page each durable value was typed on, by credential ref. */
      typedHosts: Record<string, string>;
      ssoProvider: string | null;
      /** What tells the landing page signed in from the same page without the session, for the health checks. */
      evidence: SessionEvidence;
      /** The engine that logged in: the connection's health checks and re-auths use it too. */
      engine: LoginEngineKind;
      /** The flow's kept trace (`recordSession`), which its timeline event names. */
      replayId?: string | null;
    }
  | {
      kind: "failure";
      errorCode: FlowErrorCode;
      message: string;
      /** `rate_limited`: how long the site asked to wait, when it said; uncapped. */
      retryAfterSeconds?: number | null;
      /**
       * The HTTP engine met what only a browser can go on with (no form in the served HTML, a submit
       * that left no session): the choice of engine moves the flow to the browser engine.
       */
      browserMayHelp?: boolean;
      /** The flow's kept trace (`recordSession`), which its timeline event names. */
      replayId?: string | null;
    };

/**
 * `session` (logged in or inconclusive only): the session as the check left it, for a site that
 * renews its session as its pages load (a rotated refresh token, a sliding expiry). Absent when the
 * check cannot have changed it (no answer set a cookie).
 */
export type ProbeOutcome =
  /**
   * `session`: the session as the check left it, when the site may have renewed it.
   * `evidence`: given evidence that could not tell, the probe learnt anew from what its engine sees
   * (the page with the session twice, once without), and this tells: for the later checks.
   */
  | { state: "logged_in"; session?: StorageState; evidence?: SessionEvidence }
  | { state: "logged_out"; reason: string }
  /** The site could not be asked (network, 5xx, 429, a 404 or another error answer but 401/403): the session's state is unknown, not lost. */
  | { state: "unreachable"; reason: string }
  /** The page shows nothing that tells a working session from none (its evidence is `unverifiable`). */
  | { state: "inconclusive"; reason: string; session?: StorageState };

/** What bounds one step: the credential's domain for a re-auth (values typed only there), and the flow's deadline. */
export interface StepOptions {
  credentialDomain?: string;
  deadline?: Deadline;
  /**
   * Ids of the submission's code fields that do not say their channel and hold the current code of
   * the linked credential's TOTP secret: recorded as TOTP codes (`totp_code`), so re-auths answer them.
   */
  totpCodeFields?: readonly string[];
}

export interface LoginEngine {
  /** Finds the login page (login_url, or discovered from the domain's home page) and its first form. */
  start(target: LoginTarget, deadline?: Deadline): Promise<StepOutcome>;
  /**
   * `options.credentialDomain`: the submission's values come from a credential stored for that domain
   * (a re-auth), so they are typed only on a page of it and sent only to it, checked at the moment of
   * typing; elsewhere the step fails `credential_domain_mismatch` and nothing is typed or sent.
   * `options.deadline` (and `start`'s): every wait of the step (page loads, settling, polls) ends by then.
   */
  submit(target: LoginTarget, state: EngineState, submission: Submission, options?: StepOptions): Promise<StepOutcome>;
  /**
   * Asks the site, with the saved session, whether it is still logged in: with the login's evidence,
   * only a page that still shows it counts; without (a login from before evidence was learnt), only
   * a login page, a password form or 401/403 count as logged out. Evidence that cannot tell
   * (`unverifiable`) is learnt anew from what this engine sees, and handed back when it tells.
   */
  probe(target: LoginTarget, session: StorageState, postLoginUrl: string, evidence: SessionEvidence | null): Promise<ProbeOutcome>;
  /**
   * Ends what a flow's state still holds (a live browser), when the flow ends without the engine's
   * say: expired, canceled, deleted, or its step ended in error. A state that holds nothing is fine.
   * `keepReplay` (an expired flow, a refused re-auth: the ends people debug) keeps the flow's trace
   * when it is recorded; answers that replay's id, or null.
   */
  release(state: EngineState, keepReplay?: boolean): Promise<string | null>;
}
