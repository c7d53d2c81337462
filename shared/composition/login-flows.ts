import { reauthCore } from "../domain/health-checks.ts";
import type { LoginOutcomeDeps } from "../domain/flows/outcomes.ts";
import { loginStepCore } from "../domain/flows/step.ts";
import type { Config } from "../config.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { credentials } from "./credentials.ts";
import { loginEngine } from "./login-engine.ts";
import { profileSessions } from "./profile-sessions.ts";
import { secretBox } from "./secrets.ts";
import { connectionStore } from "./table.ts";

function outcomeDeps(config: Config): LoginOutcomeDeps {
  return {
    connections: connectionStore(config),
    sessions: profileSessions(config),
    credentials: credentials(config),
    secrets: secretBox(config),
    timelineRetentionDays: config.TIMELINE_RETENTION_DAYS,
  };
}

/** A login flow's LoginStep task state. */
export const loginSteps = perConfig((config) =>
  loginStepCore({ ...outcomeDeps(config), engine: loginEngine(config), timing: workflowTiming(config) }),
);

/** The health-check loop's Reauth task state. */
export const reauth = perConfig((config) =>
  reauthCore({ ...outcomeDeps(config), engine: loginEngine(config), timing: workflowTiming(config) }),
);
