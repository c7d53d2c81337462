import { reauthCore } from "../domain/connection-workflow.ts";
import { awaitInputCore, expireFlowCore, loginRouteCore, loginStepCore, type LoginOutcomeDeps } from "../domain/login-flows.ts";
import type { Config } from "../config.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { credentials } from "./credentials.ts";
import { handoff } from "./handoff.ts";
import { loginEngine } from "./login-engine.ts";
import { profileSessions } from "./profile-sessions.ts";
import { secretBox } from "./secrets.ts";
import { connectionStore } from "./table.ts";
import { workflowEngine } from "./workflow-engine.ts";

function outcomeDeps(config: Config): LoginOutcomeDeps {
  return {
    connections: connectionStore(config),
    sessions: profileSessions(config),
    credentials: credentials(config),
    timelineRetentionDays: config.TIMELINE_RETENTION_DAYS,
  };
}

/** The login route. */
export const loginRoutes = perConfig((config) =>
  loginRouteCore({
    connections: connectionStore(config),
    engine: loginEngine(config),
    sessions: profileSessions(config),
    workflow: workflowEngine(config),
    handoff: handoff(config),
    timing: workflowTiming(config),
  }),
);

/** A login flow's LoginStep task state. */
export const loginSteps = perConfig((config) =>
  loginStepCore({ ...outcomeDeps(config), engine: loginEngine(config), secrets: secretBox(config), timing: workflowTiming(config) }),
);

/** The health-check loop's Reauth task state. */
export const reauth = perConfig((config) =>
  reauthCore({ ...outcomeDeps(config), engine: loginEngine(config), timing: workflowTiming(config) }),
);
