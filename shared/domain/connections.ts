import { newId } from "../ids.ts";
import { errorFields, log } from "../log.ts";
import {
  defaultSettings,
  existingConnection,
  toConnectionResource,
  type BrowserTelemetry,
  type Connection,
  type ConnectionListScope,
  type ConnectionSettings,
  type ConnectionStore,
  type CredentialRef,
  type TimelineEvent,
} from "./connection.ts";
import { findCredential, type CredentialStore } from "./credential.ts";
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from "./errors.ts";
import { canceled, inFlow, isInProgress, noFlow } from "./flows/state.ts";
import { isSsoProviderDomain, sameSite } from "../policy/scope.ts";
import { newProfile, type Profile, type ProfileRef, type ProfileStore } from "./profile.ts";
import { reauthRestored } from "./reauth.ts";
import type { TargetPolicy } from "../policy/scope.ts";
import { checkLoginUrl, normalizeDomain } from "./target-fields.ts";
import { executionName, startFirstExecution, type WorkflowEngine, type WorkflowTiming } from "./workflow.ts";

export interface CredentialInput {
  name?: string;
  provider?: string;
  path?: string;
  auto?: boolean;
}

export interface SettingsInput {
  login_url?: string;
  allowed_domains?: string[];
  credential?: CredentialInput | null;
  proxy?: { id?: string; name?: string } | null;
  health_checks?: boolean;
  health_check_interval?: number;
  auto_reauth?: boolean;
  save_credentials?: boolean;
  record_session?: boolean;
  browser_telemetry?: BrowserTelemetry | null;
}

export interface CreateConnectionInput extends SettingsInput {
  domain: string;
  profile_name: string;
}

export interface ListConnectionsInput {
  profile_name?: string;
  domain?: string;
  query?: string;
  limit: number;
  offset: number;
}

export interface ConnectionsCoreDeps {
  connections: ConnectionStore;
  profiles: ProfileStore;
  /** A credential linked by name must belong to the connection's sites. */
  credentials: Pick<CredentialStore, "get" | "findByName">;
  policy: TargetPolicy;
  now?: () => Date;
}

/** Only creating and deleting a connection start or stop its workflow's executions. */
export interface ConnectionLifecycleDeps extends ConnectionsCoreDeps {
  workflow: WorkflowEngine;
  timing: WorkflowTiming;
}

/** A delete racing executions that keep handing over is retried; more is a bug. */
const maxStopRounds = 5;

/**
 * A create that loses a race (its profile deleted after the lookup, or its new profile's name taken
 * by a concurrent create) reads the profile again: once settles it, more is a bug.
 */
const maxCreatePasses = 3;

/** A connection as create first stores it: no session yet, its workflow's first execution named, not yet started. */
export function newConnection(fields: {
  org: string;
  profile: { id: string; name: string };
  domain: string;
  settings: ConnectionSettings;
  createdAt: string;
  executionArnOf: (executionName: string) => string;
}): Connection {
  const id = newId("ac");
  return {
    id,
    org: fields.org,
    profile_id: fields.profile.id,
    profile_name: fields.profile.name,
    domain: fields.domain,
    created_at: fields.createdAt,
    updated_at: fields.createdAt,
    version: 1,
    status: "NEEDS_AUTH",
    last_auth_check_at: null,
    last_auth_at: null,
    can_reauth: false,
    can_reauth_reason: "no_prior_successful_login",
    post_login_url: null,
    execution_arn: fields.executionArnOf(executionName(id, 0)),
    workflow_generation: 0,
    workflow_start_pending: true,
    ...fields.settings,
    ...noFlow,
  };
}

function settingsFrom(input: SettingsInput, policy: TargetPolicy): Partial<ConnectionSettings> {
  const settings: Partial<ConnectionSettings> = {};
  if (input.login_url === "") settings.login_url = null;
  else if (input.login_url !== undefined) {
    checkLoginUrl(input.login_url, policy);
    settings.login_url = input.login_url;
  }
  if (input.allowed_domains !== undefined) {
    const normalized = input.allowed_domains.map((domain, index) => normalizeDomain(domain, `allowed_domains[${index}]`, policy));
    settings.allowed_domains = [...new Set(normalized)];
  }
  if (input.credential !== undefined) settings.credential = input.credential === null ? null : credentialRef(input.credential);
  if (input.proxy !== undefined) settings.proxy_id = input.proxy === null ? null : proxyId(input.proxy);
  for (const flag of ["health_checks", "auto_reauth", "save_credentials", "record_session"] as const) {
    if (input[flag] !== undefined) settings[flag] = input[flag];
  }
  if (input.health_check_interval !== undefined) settings.health_check_interval = input.health_check_interval;
  if (input.browser_telemetry !== undefined) settings.browser_telemetry = input.browser_telemetry;
  return settings;
}

function isoClock(now: (() => Date) | undefined) {
  const clock = now ?? (() => new Date());
  return { now: () => clock().toISOString() };
}

/** Reading and changing connections: no workflow execution starts or stops here. */
export function connectionsCore(deps: ConnectionsCoreDeps) {
  const { now } = isoClock(deps.now);

  return {
    async get(org: string, id: string) {
      return toConnectionResource(await existingConnection(deps.connections, org, id));
    },

    async list(org: string, input: ListConnectionsInput) {
      const scope = await listScope(org, input);
      if (!scope) return { items: [], hasMore: false };
      const needle = input.query?.toLowerCase();
      const page = await deps.connections.list({
        org,
        scope,
        offset: input.offset,
        limit: input.limit,
        matches: needle
          ? (connection) =>
              connection.id.toLowerCase().includes(needle) ||
              connection.domain.includes(needle) ||
              connection.profile_name.toLowerCase().includes(needle)
          : undefined,
      });
      return { items: page.items.map(toConnectionResource), hasMore: page.hasMore };
    },

    async update(org: string, id: string, input: SettingsInput) {
      const changes = settingsFrom(input, deps.policy);
      if (Object.keys(changes).length === 0) return toConnectionResource(await existingConnection(deps.connections, org, id));
      if (changes.credential?.name) {
        const current = await existingConnection(deps.connections, org, id);
        await checkCredentialLink(deps, org, changes.credential.name, current.domain, changes.allowed_domains ?? current.allowed_domains);
      }
      const updated = await deps.connections.updateSettings(org, id, changes, now());
      if (!updated) throw new NotFoundError(`auth connection '${id}' not found`);
      const rejected = updated.reauth_rejected_credential;
      if (changes.credential && rejected) {
        // Linking a credential again (another, or the same one fixed) lets re-auth try it.
        const restored = await deps.connections.guardedUpdate(org, id, { rejectedCredential: rejected.credential_id }, reauthRestored(rejected));
        return toConnectionResource(restored ?? (await existingConnection(deps.connections, org, id)));
      }
      return toConnectionResource(updated);
    },

    async timeline(org: string, id: string, input: { type?: TimelineEvent["type"]; limit: number; offset: number }) {
      await existingConnection(deps.connections, org, id);
      return deps.connections.timeline({
        org,
        id,
        offset: input.offset,
        limit: input.limit,
        matches: input.type ? (event) => event.type === input.type : undefined,
      });
    },
  };

  async function listScope(org: string, input: ListConnectionsInput): Promise<ConnectionListScope | undefined> {
    const domain = input.domain === undefined ? undefined : input.domain.trim().toLowerCase();
    if (input.profile_name === undefined) return domain === undefined ? { kind: "org" } : { kind: "domain", domain };
    const profile = await deps.profiles.findByName(org, input.profile_name);
    if (!profile) return undefined;
    return domain === undefined
      ? { kind: "profile", profileId: profile.id }
      : { kind: "profileAndDomain", profileId: profile.id, domain };
  }
}

/** Creating and deleting a connection, which start and stop its workflow's executions. */
export function connectionLifecycleCore(deps: ConnectionLifecycleDeps) {
  const { now } = isoClock(deps.now);

  /** The profile of that name, or a new one to be written in the connection's own transaction. */
  async function profileNamed(org: string, name: string, createdAt: string): Promise<{ ref: ProfileRef; created?: Profile }> {
    const existing = await deps.profiles.findByName(org, name);
    if (existing) return { ref: existing };
    const created = newProfile(name, createdAt);
    return { ref: created, created };
  }

  /**
   * The record is stored and marked, so a start that fails here is made by the next touch (a retried
   * create, a login, the local runtime's restart); the create itself happened and answers so.
   */
  async function startOrLeaveMarked(connection: Connection): Promise<void> {
    try {
      await startFirstExecution(deps, connection);
    } catch (error) {
      log.warn("the connection's first workflow execution did not start; the next touch starts it", { connectionId: connection.id, ...errorFields(error) });
    }
  }

  return {
    async create(org: string, input: CreateConnectionInput) {
      const domain = normalizeDomain(input.domain, "domain", deps.policy);
      const settings = { ...defaultSettings, ...settingsFrom(input, deps.policy) };
      if (settings.credential?.name) await checkCredentialLink(deps, org, settings.credential.name, domain, settings.allowed_domains);
      for (let pass = 1; pass <= maxCreatePasses; pass++) {
        const createdAt = now();
        const profile = await profileNamed(org, input.profile_name, createdAt);
        const connection = newConnection({ org, profile: profile.ref, domain, settings, createdAt, executionArnOf: deps.workflow.executionArn });
        const result = await deps.connections.insert(connection, profile.created);
        if (result.outcome === "created") {
          await startOrLeaveMarked(connection);
          return toConnectionResource(connection);
        }
        if (result.outcome === "duplicate") {
          // The usual retry of a create that failed or was cut off after its write: its workflow may be missing.
          const existing = await deps.connections.get(org, result.existingId);
          if (existing?.workflow_start_pending) await startOrLeaveMarked(existing);
          throw new ConflictError(
            `an auth connection for profile '${input.profile_name}' and domain '${domain}' already exists`,
            result.existingId,
          );
        }
      }
      throw new ServiceUnavailableError(`profile '${input.profile_name}' kept changing while the connection was being created; retry`);
    },

    async remove(org: string, id: string) {
      // Stop first, then remove only if the record still points at the stopped execution: an
      // execution that continued into a new one meanwhile is stopped on the next round.
      for (let round = 1; round <= maxStopRounds; round++) {
        const connection = await existingConnection(deps.connections, org, id);
        await cancelFlow(connection);
        if (connection.execution_arn) await deps.workflow.stop(connection.execution_arn);
        const outcome = await deps.connections.remove(org, id, connection.execution_arn);
        if (outcome === "removed") return;
        if (outcome === "gone") throw new NotFoundError(`auth connection '${id}' not found`);
      }
      throw new ServiceUnavailableError(`auth connection '${id}' kept changing while it was being deleted; retry`);
    },
  };

  /** A login in progress ends CANCELED (what an events stream sees last) and its execution stops. */
  async function cancelFlow(connection: Connection): Promise<void> {
    if (isInProgress(connection) && connection.flow_id) {
      await deps.connections.guardedUpdate(connection.org, connection.id, inFlow(connection.flow_id), canceled());
      if (connection.flow_execution_arn) await deps.workflow.stop(connection.flow_execution_arn);
    }
  }
}

/**
 * Refuses with a 400 naming both domains a credential no page of the connection could take: one
 * saved for neither the connection's site, an `allowed_domains` entry's, nor a known identity
 * provider's. A name no credential has yet is a link a first login's `save_credentials` fills.
 */
async function checkCredentialLink(deps: Pick<ConnectionsCoreDeps, "credentials">, org: string, name: string, domain: string, allowedDomains: string[]): Promise<void> {
  const credential = await findCredential(deps.credentials, org, name);
  if (!credential) return;
  if ([domain, ...allowedDomains].some((site) => sameSite(credential.domain, site)) || isSsoProviderDomain(credential.domain)) return;
  const why = `credential '${name}' is saved for ${credential.domain}, which is not the connection's domain ${domain}, one of its allowed_domains or a known SSO provider's: it would never be typed on this connection's pages`;
  throw new BadRequestError(`credential: ${why}`, [{ code: "credential", message: why }]);
}

function credentialRef(input: CredentialInput): CredentialRef {
  return { name: input.name ?? null, provider: input.provider ?? null, path: input.path ?? null, auto: input.auto ?? false };
}

function proxyId(input: { id?: string; name?: string }): string {
  if (input.id !== undefined) return input.id;
  throw new BadRequestError("proxy.name: this deployment keeps no proxy registry to look names up in; give proxy.id", [
    { code: "proxy.name", message: "proxies can be referenced by id only" },
  ]);
}
