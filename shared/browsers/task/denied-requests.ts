/** The port a URL goes to: its own, or its scheme's default. */
function portOf(url: URL): number | undefined {
  if (url.port !== "") return Number(url.port);
  return { "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 }[url.protocol];
}

/** True for a file: URL, or one to any of `deniedPorts` on whatever host. */
export function deniedRequest(url: string, deniedPorts: readonly number[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return true;
  }
  if (parsed.protocol === "file:") return true;
  const port = portOf(parsed);
  return port !== undefined && deniedPorts.includes(port);
}

/**
 * Fetch interception patterns that catch at least every request `deniedRequest` refuses: a port in a
 * pattern can also match elsewhere in a URL (a path), so each paused request is decided on its
 * parsed URL, and a scheme's default port is absent from the URLs that go to it.
 */
export function deniedRequestPatterns(deniedPorts: readonly number[]): { urlPattern: string }[] {
  return [
    "file:*",
    ...deniedPorts.flatMap((port) => [
      `*://*:${port}/*`,
      ...(port === 80 ? ["http://*"] : []),
      ...(port === 443 ? ["https://*"] : []),
    ]),
  ].map((urlPattern) => ({ urlPattern }));
}
