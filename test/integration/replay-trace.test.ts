import { createServer } from "node:http";
import { strFromU8, unzipSync } from "fflate";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { replayMask, startReplay, stopReplay } from "#shared/login/browser/replay.ts";
import { listenOnLoopback, randomToken } from "../sites/site-http.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";

const email = "ada@example.com";
const password = "correct horse";
const basicCredential = Buffer.from(`${email}:${password}`).toString("base64");
const apiToken = randomToken();

/**
 * A single-page app whose script signs in with `Authorization: Basic`, receives its API token as a
 * cookie it can read, and calls the API with `Authorization: Bearer` (and the cookie).
 */
const appPage = `<!doctype html>
<title>App</title>
<form id="signin"><input id="email" name="email"><input id="password" name="password" type="password"><button>Sign in</button></form>
<p id="out"></p>
<script>
document.querySelector("#signin").addEventListener("submit", async (event) => {
  event.preventDefault();
  const basic = btoa(document.querySelector("#email").value + ":" + document.querySelector("#password").value);
  await fetch("/api/login", { method: "POST", headers: { authorization: "Basic " + basic } });
  const token = document.cookie.split("api=")[1];
  const me = await fetch("/api/me", { headers: { authorization: "Bearer " + token } });
  document.querySelector("#out").textContent = await me.text();
});
</script>`;

const server = createServer((request, response) => {
  if (request.url === "/api/login" && request.headers.authorization === `Basic ${basicCredential}`) {
    response.writeHead(204, { "set-cookie": `api=${apiToken}; Path=/; SameSite=Lax` }).end();
  } else if (request.url === "/api/me" && request.headers.authorization === `Bearer ${apiToken}`) {
    response.writeHead(200, { "content-type": "text/plain" }).end("Welcome back");
  } else if (request.url === "/") {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(appPage);
  } else {
    response.writeHead(401).end();
  }
});

let site: Awaited<ReturnType<typeof listenOnLoopback>>;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let browser: Browser | undefined;

beforeAll(async () => {
  site = await listenOnLoopback(server);
  chromium = await loginChromiumForTests();
});

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  expect(chromium?.running() ?? []).toEqual([]);
  await chromium?.dispose();
  await site?.stop();
});

describe("a flow's replay", () => {
  it("keeps no credential a header or a cookie carried, and no screencast frame", async () => {
    browser = await chromium.launch();
    const context = await browser.newContext();
    await startReplay(context);
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${site.port}/`);
    await page.fill("#email", email);
    await page.fill("#password", password);
    await page.click("button");
    await page.locator("#out", { hasText: "Welcome back" }).waitFor();
    // The engine reads the browser's state before the trace stops, as it does at a flow's end.
    expect((await context.storageState()).cookies).toContainEqual(expect.objectContaining({ name: "api", value: apiToken }));

    const entries = unzipSync(await stopReplay(context, [email, password]));

    const leaks = Object.entries(entries).flatMap(([name, data]) =>
      [basicCredential, apiToken, password].filter((secret) => Buffer.from(data).includes(secret)).map((secret) => `${name} holds ${secret}`),
    );
    expect(leaks).toEqual([]);
    expect(Object.keys(entries).filter((name) => name.startsWith("screencast/"))).toEqual([]);
    expect(strFromU8(entries["trace.trace"]!)).not.toContain('"screencast-frame"');
    const requests = strFromU8(entries["trace.network"]!)
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { snapshot?: { request: { url: string; headers: { name: string; value: string }[] } } })
      .flatMap((event) => (event.snapshot ? [event.snapshot.request] : []));
    const apiCall = requests.find((request) => request.url.endsWith("/api/me"));
    expect(apiCall?.headers).toEqual(
      expect.arrayContaining([
        { name: expect.stringMatching(/^authorization$/i), value: replayMask },
        { name: expect.stringMatching(/^cookie$/i), value: replayMask },
      ]),
    );
  });
});
