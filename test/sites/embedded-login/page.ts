import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";

const script = new URL("./login-ui.js", import.meta.url);

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Caller's app</title><script type="module" src="/login-ui.js"></script></head>
<body><h1>The caller's own web app</h1></body>
</html>`;

/**
 * A caller's web app on an origin of its own (127.0.0.1, a port of its own), whose page embeds a
 * login UI that calls the service across origins (./login-ui.js).
 */
export async function startEmbeddingApp(): Promise<{ url: string; stop(): Promise<void> }> {
  const scriptText = await readFile(script, "utf8");
  const server = createServer((request, response) => {
    if (request.url === "/") response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    else if (request.url === "/login-ui.js") response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(scriptText);
    else response.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise((done) => server.close(() => done())),
  };
}

/** The app at `appUrl` open in a new page of `browser`, once its login UI script is loaded. */
export async function openEmbeddingApp(browser: Browser, appUrl: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(appUrl);
  await page.waitForFunction(() => "embeddedLogin" in globalThis);
  return page;
}
