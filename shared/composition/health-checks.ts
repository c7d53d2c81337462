import { healthCheckCore } from "../domain/health-checks.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { loginEngine } from "./login-engine.ts";
import { profileSessions } from "./profile-sessions.ts";
import { secretBox } from "./secrets.ts";
import { connectionStore } from "./table.ts";

export const healthChecks = perConfig((config) =>
  healthCheckCore({
    connections: connectionStore(config),
    engine: loginEngine(config),
    sessions: profileSessions(config),
    secrets: secretBox(config),
    timing: workflowTiming(config),
    timelineRetentionDays: config.TIMELINE_RETENTION_DAYS,
  }),
);
