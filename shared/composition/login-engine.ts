import type { Config } from "../config.ts";
import { chooseLoginEngine } from "../login/engine-choice.ts";
import type { LoginEngine } from "../login/types.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { httpLoginEngine } from "./http-login-engine.ts";
import { replays } from "./replays.ts";

let localChromium: (() => Promise<string>) | undefined;

/**
 * The local runtime names its Chromium here (unpacked under its data directory, or the one
 * BROWSER_EXECUTABLE names) rather than this module importing the local unpacking code into Lambda
 * bundles, where `@sparticuz/chromium` unpacks into the function's own /tmp.
 */
export function provideLocalLoginChromium(executablePath: () => Promise<string>): void {
  localChromium = executablePath;
}

function chromiumExecutable(config: Config): () => Promise<string> {
  if (config.DEPLOYMENT_MODE === "aws") return async () => (await import("@sparticuz/chromium")).default.executablePath();
  if (!localChromium) throw new Error("local mode runs the login browser through the local runtime's Chromium (infra/local/stack.ts)");
  return localChromium;
}

/**
 * The browser engine, loaded at its first use: the health checks and re-auths of HTTP logins run in
 * the same functions, and would otherwise load playwright-core at every cold start.
 */
function browserOnFirstUse(config: Config): LoginEngine {
  let loading: Promise<LoginEngine> | undefined;
  const engine = () =>
    (loading ??= loadBrowserEngine(config).catch((error: unknown) => {
      // A failed load (a missing Chromium, say) is tried again by the next flow rather than kept.
      loading = undefined;
      throw error;
    }));
  return {
    start: async (...args) => (await engine()).start(...args),
    submit: async (...args) => (await engine()).submit(...args),
    probe: async (...args) => (await engine()).probe(...args),
    release: async (...args) => (await engine()).release(...args),
  };
}

async function loadBrowserEngine(config: Config): Promise<LoginEngine> {
  const [{ createBrowserLoginEngine }, { launchLoginBrowser }, { startPolicyProxy }] = await Promise.all([
    import("../login/browser/engine.ts"),
    import("../login/browser/chromium.ts"),
    import("../login/browser/network-policy-proxy.ts"),
  ]);
  const { allowPrivateTargets } = targetPolicy(config);
  const executablePath = chromiumExecutable(config);
  return createBrowserLoginEngine({
    async openBrowser(target) {
      const proxy = await startPolicyProxy({ target, allowPrivateTargets });
      try {
        const launched = await launchLoginBrowser({ executablePath: await executablePath(), proxyServer: proxy.server });
        return {
          browser: launched,
          refused: () => proxy.refused(),
          async close() {
            try {
              await launched.close();
            } finally {
              await proxy.close();
            }
          },
        };
      } catch (error) {
        await proxy.close();
        throw error;
      }
    },
    async saveReplay(target, zip) {
      if (!target.owner) throw new Error("a recorded flow's target names no connection to file its replay under");
      return replays(config).save(target.owner.org, target.owner.connectionId, zip);
    },
  });
}

/** The HTTP engine where it works, the browser engine where a login needs script (shared/login/engine-choice.ts). */
export const loginEngine = perConfig((config) => chooseLoginEngine({ http: httpLoginEngine(config), browser: browserOnFirstUse(config) }));
