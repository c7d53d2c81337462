import { canReauthReason, reauthPossible } from "../reauth.ts";
import { credentialFitsHost } from "../../policy/scope.ts";
import type { StepOutcome } from "../../login/types.ts";
import type { SecretBox } from "../../secrets/secret-box.ts";
import { timelineRecord, type Connection, type ConnectionStore, type RecordGuard, type TimelineEvent, type TimelineRecord } from "../connection.ts";
import { NotFoundError } from "../errors.ts";
import type { ProfileSessions } from "../profile-sessions.ts";
import { evidenceFields } from "../sealed-evidence.ts";
import { expired, inFlow, succeeded, type FlowEnd } from "./state.ts";

/** The credential operations a login needs (shared/domain/credentials.ts). */
export interface LoginCredentials {
  forLogin(
    org: string,
    name: string,
  ): Promise<{ id: string; name: string; domain: string; values: Record<string, string>; totpSecret: string | null; ssoProvider: string | null } | undefined>;
  /**
   * Undefined when a credential of that name belongs to another domain: nothing is written then.
   * `ssoProvider`: the values were typed at that identity provider, which the credential signs in through.
   */
  saveFromLogin(
    org: string,
    credential: { name: string; domain: string; values: Record<string, string>; ssoProvider?: string | null },
  ): Promise<{ id: string; name: string; hasTotpSecret: boolean } | undefined>;
  /** The credential's public face; throws NotFoundError when there is none of that name. */
  get(org: string, idOrName: string): Promise<{ id: string; name: string; domain: string; has_totp_secret: boolean }>;
}

export interface LoginOutcomeDeps extends FlowEndDeps {
  sessions: ProfileSessions;
  credentials: LoginCredentials;
  /** Seals the session evidence a success leaves on the record. */
  secrets: SecretBox;
}

/** How a flow ended, on the record and its timeline: needs only the connection store. */
export interface FlowEndDeps {
  connections: ConnectionStore;
  timelineRetentionDays: number;
  now?: () => Date;
}

const eventType = (connection: Connection) => (connection.flow_type === "REAUTH" ? "reauth" : "login");

export function flowEnds(deps: FlowEndDeps) {
  const clock = deps.now ?? (() => new Date());

  function timeline(
    type: TimelineEvent["type"],
    status: string,
    connection: Connection,
    error?: { code: string; message: string },
    replayId?: string | null,
  ): TimelineRecord {
    return timelineRecord(connection, { type, status, error, replayId }, clock(), deps.timelineRetentionDays);
  }

  /** `end.replayId`: the flow's kept trace, which the timeline event names. */
  async function fail(
    connection: Connection,
    guard: RecordGuard,
    end: FlowEnd & { replayId?: string | null },
    changes: Partial<Connection> = {},
  ): Promise<boolean> {
    const { replayId, ...ending } = end;
    return deps.connections.recordOutcome(
      connection.org,
      connection.id,
      guard,
      { ...ending, ...changes },
      timeline(eventType(connection), ending.flow_status, connection, { code: ending.error_code, message: ending.error_message }, replayId),
    );
  }

  return {
    timeline,
    fail,

    async expire(connection: Connection, flowId: string, replayId?: string | null): Promise<void> {
      await fail(connection, inFlow(flowId), { ...expired(), replayId });
    },
  };
}

/** The domains of the profile's connections, which its archive's manifest lists. */
export async function profileDomains(connections: ConnectionStore, connection: Connection): Promise<string[]> {
  const page = await connections.list({ org: connection.org, scope: { kind: "profile", profileId: connection.profile_id }, offset: 0, limit: 100 });
  return [...new Set([connection.domain, ...page.items.map((item) => item.domain)])].sort();
}

/**
 * The end of a login or re-auth: success saves the session into the profile and the durable
 * values into the linked credential; either way the record and its timeline say how it ended.
 */
export function loginOutcomes(deps: LoginOutcomeDeps) {
  const clock = deps.now ?? (() => new Date());
  const ends = flowEnds(deps);
  const timeline = ends.timeline;

  /**
   * The credential the login leaves linked, if any, and whether the link moves to it. Asked to save,
   * the values typed go into the credential of the site each was typed on: the linked one when its
   * domain takes that page, else `<profile>-<site>`, never into a credential of another domain. The
   * link moves when the linked credential took none of them: to the one that took the password, or
   * the only one saved. Values typed off the connection's domain in a login through `ssoProvider`
   * were typed at that identity provider: their credential is marked as signing in through it.
   */
  async function saveCredential(
    connection: Connection,
    values: Record<string, string>,
    typedHosts: Record<string, string>,
    ssoProvider: string | null,
  ): Promise<{ credential: { id: string; name: string; hasTotpSecret: boolean } | undefined; relink: boolean }> {
    const linkedName = connection.credential?.name ?? null;
    const linked = linkedName
      ? await deps.credentials.get(connection.org, linkedName).catch((error: unknown) => {
          if (error instanceof NotFoundError) return undefined;
          throw error;
        })
      : undefined;
    const kept = { credential: linked && { id: linked.id, name: linked.name, hasTotpSecret: linked.has_totp_secret }, relink: false };
    if (!connection.save_credentials || Object.keys(values).length === 0) return kept;
    const groups = new Map<string, { name: string; domain: string; values: Record<string, string>; ssoProvider: string | null }>();
    for (const [ref, value] of Object.entries(values)) {
      const host = typedHosts[ref];
      // A value whose page is not known is saved nowhere rather than under a site it may not belong to.
      if (host === undefined) continue;
      const site = linked && credentialFitsHost(linked.domain, host) ? { name: linked.name, domain: linked.domain } : siteCredential(connection, linked ? null : linkedName, host);
      const atProvider = ssoProvider !== null && !credentialFitsHost(connection.domain, host);
      const group = groups.get(site.name) ?? { ...site, values: {}, ssoProvider: atProvider ? ssoProvider : null };
      group.values[ref] = value;
      groups.set(site.name, group);
    }
    const saved: Array<{ credential: { id: string; name: string; hasTotpSecret: boolean }; holdsPassword: boolean }> = [];
    for (const group of groups.values()) {
      const credential = await deps.credentials.saveFromLogin(connection.org, group);
      if (credential) saved.push({ credential, holdsPassword: group.values.password !== undefined });
    }
    const own = saved.find((entry) => entry.credential.id === linked?.id);
    const chosen = own ?? saved.find((entry) => entry.holdsPassword) ?? saved[0];
    if (!chosen) return kept;
    return { credential: chosen.credential, relink: chosen.credential.name !== linkedName && chosen !== own };
  }

  return {
    ...ends,

    async succeed(
      connection: Connection,
      guard: RecordGuard,
      outcome: Extract<StepOutcome, { kind: "success" }>,
      changes: Partial<Connection> = {},
    ): Promise<boolean> {
      const saved = await deps.sessions.save(connection.org, { id: connection.profile_id, name: connection.profile_name }, await profileDomains(deps.connections, connection), outcome.session);
      if (!saved) return false;
      const { credential, relink } = await saveCredential(connection, outcome.durableValues, outcome.typedHosts ?? {}, outcome.ssoProvider);
      const reason = canReauthReason(outcome.requirements, credential !== undefined, credential?.hasTotpSecret ?? false, Boolean(connection.credential?.provider));
      const now = clock().toISOString();
      const evidence = await evidenceFields(deps.secrets, connection, outcome.evidence);
      const ending = succeeded();
      return deps.connections.recordOutcome(
        connection.org,
        connection.id,
        guard,
        {
          ...ending,
          status: "AUTHENTICATED",
          website_error: null,
          error_code: null,
          error_message: null,
          sso_provider: outcome.ssoProvider,
          last_auth_at: now,
          post_login_url: outcome.postLoginUrl,
          ...evidence,
          login_requirements: outcome.requirements,
          login_engine: outcome.engine,
          can_reauth: reauthPossible(reason),
          can_reauth_reason: reason,
          reauth_rejected_credential: null,
          unverified_reauths: 0,
          // The checks before judged the old evidence; the new one is judged afresh.
          inconclusive_checks: 0,
          ...(relink && credential ? { credential: { name: credential.name, provider: null, path: null, auto: false } } : {}),
          ...changes,
        },
        timeline(eventType(connection), ending.flow_status, connection, undefined, outcome.replayId),
      );
    },

  };
}

/**
 * The credential for values typed on `host` when the linked one does not take them: one per site,
 * named `<profile>-<site>`, the site being the connection's domain, the `allowed_domains` entry the
 * host is in, or the host itself (an identity provider's). A link by a name no credential has yet
 * keeps that name for the connection's own domain.
 */
function siteCredential(connection: Connection, linkedName: string | null, host: string): { name: string; domain: string } {
  if (credentialFitsHost(connection.domain, host)) {
    return { name: linkedName ?? `${connection.profile_name}-${connection.domain}`.slice(0, 255), domain: connection.domain };
  }
  const domain = connection.allowed_domains.find((allowed) => credentialFitsHost(allowed, host)) ?? host;
  return { name: `${connection.profile_name}-${domain}`.slice(0, 255), domain };
}
