import { reauthCore } from "../domain/connection-workflow.ts";
import { flowTaskCore, loginRouteCore, type LoginOutcomeDeps } from "../domain/login-flows.ts";
import type { Config } from "../config.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { credentials } from "./credentials.ts";
import { handoff } from "./handoff.ts";
import { loginEngine } from "./login-engine.ts";
import { profileSessions } from "./profile-sessions.ts";
import { secretBox } from "./secrets.ts";
import { connectionStore } from "./table.ts";
import { flowSignal, workflowEngine } from "./workflow-engine.ts";

function outcomeDeps(config: Config): LoginOutcomeDeps {
  return {
    connections: connectionStore(config),
    sessions: profileSessions(config),
    credentials: credentials(config),
    timelineRetentionDays: config.TIMELINE_RETENTION_DAYS,
  };
}

/** The login and submit routes. */
export const loginRoutes = perConfig((config) =>
  loginRouteCore({
    connections: connectionStore(config),
    engine: loginEngine(config),
    sessions: profileSessions(config),
    secrets: secretBox(config),
    workflow: workflowEngine(config),
    signal: flowSignal(config),
    handoff: handoff(config),
    timing: workflowTiming(config),
  }),
);

/** The task states of a login flow's execution. */
export const flowTasks = perConfig((config) =>
  flowTaskCore({ ...outcomeDeps(config), engine: loginEngine(config), secrets: secretBox(config), signal: flowSignal(config), timing: workflowTiming(config) }),
);

/** The health-check loop's Reauth task state. */
export const reauth = perConfig((config) =>
  reauthCore({ ...outcomeDeps(config), engine: loginEngine(config), timing: workflowTiming(config) }),
);
