import { loginRouteCore } from "../domain/login-flows.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { handoffCodes } from "./handoff.ts";
import { loginEngine } from "./login-engine.ts";
import { profileSessions } from "./profile-sessions.ts";
import { connectionStore } from "./table.ts";
import { workflowEngine } from "./workflow-engine.ts";

/** The login route: apart from the flow steps, so its bundle carries neither the secret box nor credentials. */
export const loginRoutes = perConfig((config) =>
  loginRouteCore({
    connections: connectionStore(config),
    engine: loginEngine(config),
    sessions: profileSessions(config),
    workflow: workflowEngine(config),
    handoff: handoffCodes(config),
    timing: workflowTiming(config),
  }),
);
