/**
 * Prints the milliseconds a fresh process takes to import what the service loads at its first
 * browser flow: the engine, the launcher and the network-policy proxy (shared/composition/login-engine.ts,
 * `loadBrowserEngine`), and playwright-core, which the launcher imports at its first launch.
 */
const started = performance.now();
await Promise.all([
  import("#shared/login/browser/engine.ts"),
  import("#shared/login/browser/chromium.ts"),
  import("#shared/login/browser/network-policy-proxy.ts"),
  import("playwright-core"),
]);
process.stdout.write(String(performance.now() - started));
