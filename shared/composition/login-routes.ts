import type { Config } from "../config.ts";
import { loginRouteCore } from "../domain/flows/start.ts";
import type { LoginEngine } from "../login/types.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { handoffCodes } from "./handoff.ts";
import { profileSessions } from "./profile-sessions.ts";
import { connectionStore } from "./table.ts";
import { workflowEngine } from "./workflow-engine.ts";

/**
 * The HTTP login engine, loaded by the route's first probe: a login on a connection without a working
 * session (every first login) never probes, and would otherwise build the engine's HTML parser,
 * cookie jar and public-suffix list at each cold start. Bundled, the engine stays in the one file,
 * its modules evaluated only when this import first runs.
 */
function probeOnFirstUse(config: Config): Pick<LoginEngine, "probe"> {
  return {
    async probe(...args) {
      const { httpLoginEngine } = await import("./http-login-engine.ts");
      return httpLoginEngine(config).probe(...args);
    },
  };
}

/** The secret box, loaded with the engine: only a probe opens the session evidence it looks for. */
function openOnFirstUse(config: Config): Pick<SecretBox, "open"> {
  return {
    async open(...args) {
      const { secretBox } = await import("./secrets.ts");
      return secretBox(config).open(...args);
    },
  };
}

/** The login route: apart from the flow steps, so its bundle carries no credentials. */
export const loginRoutes = perConfig((config) =>
  loginRouteCore({
    connections: connectionStore(config),
    engine: probeOnFirstUse(config),
    sessions: profileSessions(config),
    secrets: openOnFirstUse(config),
    workflow: workflowEngine(config),
    handoff: handoffCodes(config),
    timing: workflowTiming(config),
    publicBaseUrl: config.PUBLIC_BASE_URL,
  }),
);
