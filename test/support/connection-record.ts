import { defaultSettings, type Connection } from "#shared/domain/connection.ts";
import { noFlow } from "#shared/domain/flows/state.ts";

/** A stored connection for in-memory tests of the cores: defaults, no flow, `overrides` on top. */
export function connectionRecord(overrides: Partial<Connection> = {}): Connection {
  return {
    ...defaultSettings,
    ...noFlow,
    id: "ac_1",
    org: "acme",
    profile_id: "pr_1",
    profile_name: "p",
    domain: "example.com",
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    version: 1,
    status: "NEEDS_AUTH",
    last_auth_check_at: null,
    last_auth_at: null,
    can_reauth: false,
    can_reauth_reason: null,
    post_login_url: null,
    execution_arn: null,
    workflow_generation: 0,
    ...overrides,
  };
}
