/**
 * The flags every Chromium the service starts runs with: the pool's browsers
 * (`shared/browsers/local-chromium.ts`, the browser tasks) and the login engine's (`shared/login/browser/chromium.ts`) add their own.
 */
export const baseChromiumFlags: readonly string[] = [
  // Lambda and containers run as root without user namespaces, where Chromium's sandbox cannot start.
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  // No traffic of Chromium's own (updates, sync, field trials) beside what the page asks for.
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // QUIC runs over UDP, which no HTTP proxy in front of the browser carries.
  "--disable-quic",
];
