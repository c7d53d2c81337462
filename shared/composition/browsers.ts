import { unavailableBrowsers, type BrowserProvider } from "../browsers/provider.ts";
import type { Config } from "../config.ts";
import { perConfig } from "./config.ts";

/** AWS has no browser provider yet (container tasks are to come): pool records work, acquire answers 503. */
export const noAwsBrowsers =
  "this deployment cannot run pooled browsers yet: the AWS browser provider (browsers as container tasks) is not built; " +
  "pools can be created, listed, updated and deleted, and acquire works on a local deployment (npm start)";

let localProvider: ((config: Config) => BrowserProvider) | undefined;

/**
 * The local runtime plugs its Chromium provider in here rather than this module importing it, so
 * no Lambda bundle carries local Chromium and the Chromium download code it loads.
 */
export function provideLocalBrowsers(make: (config: Config) => BrowserProvider): void {
  localProvider = make;
}

export const browsers = perConfig((config) => {
  if (config.DEPLOYMENT_MODE === "aws") return unavailableBrowsers(noAwsBrowsers);
  if (!localProvider) throw new Error("local mode runs browsers through the local runtime's provider (infra/local/stack.ts)");
  return localProvider(config);
});
