import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { escapeHtml } from "../sites/site-html.ts";
import { handlerClock, htmlReply, serveRoutes, textReply, type Route } from "../sites/site-http.ts";
import { browserPid, commandLineOf, loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";

/**
 * The login engine's browser keeps the same-origin policy: a page of one site cannot read what
 * another site answers it. Two servers on 127.0.0.1 on different ports are two origins.
 */

type Server = Awaited<ReturnType<typeof serveRoutes>>;

let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let page: Server;
let other: Server;
let browser: Browser | undefined;

const secret = "the other site's account data";

beforeAll(async () => {
  chromium = await loginChromiumForTests();
  page = await serveRoutes(
    new Map<string, Route>([
      ["/", { GET: () => htmlReply("<!doctype html><title>Reader</title><h1>Reader</h1>") }],
      ["/framing", { GET: ({ query }) => htmlReply(`<!doctype html><title>Framing</title><iframe src="${escapeHtml(query.get("src") ?? "")}"></iframe>`) }],
    ]),
    handlerClock(),
  );
  other = await serveRoutes(
    new Map<string, Route>([
      ["/account", { GET: () => textReply(secret) }],
      ["/frame", { GET: () => htmlReply(`<!doctype html><title>Account</title><p>${secret}</p>`) }],
      ["/shared", { GET: () => ({ ...textReply("public data"), headers: { "content-type": "text/plain", "access-control-allow-origin": "*" } }) }],
    ]),
    handlerClock(),
  );
});

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  await Promise.all([page?.stop(), other?.stop()]);
  const left = chromium.running();
  await chromium.dispose();
  expect(left).toEqual([]);
});

async function readerPage() {
  browser = await chromium.launch();
  const reader = await (await browser.newContext()).newPage();
  await reader.goto(`http://127.0.0.1:${page.port}/`);
  return reader;
}

describe("the login browser's same-origin policy", () => {
  it("lets a page read another origin's answer only when that origin allows it by CORS", async () => {
    // Prepare
    const reader = await readerPage();
    const otherOrigin = `http://127.0.0.1:${other.port}`;

    // Act
    const results = await reader.evaluate(async (origin) => {
      const read = (path: string) =>
        fetch(`${origin}${path}`).then(
          (response) => response.text(),
          (error: Error) => `rejected: ${error.name}`,
        );
      return { withoutCors: await read("/account"), withCors: await read("/shared") };
    }, otherOrigin);

    // Assess
    expect(results.withoutCors).toBe("rejected: TypeError");
    expect(results.withCors).toBe("public data");
  });

  it("gives a page no access to the document of another origin's frame", async () => {
    // Prepare
    const reader = await readerPage();
    const otherOrigin = `http://127.0.0.1:${other.port}`;

    // Act
    await reader.goto(`http://127.0.0.1:${page.port}/framing?src=${encodeURIComponent(`${otherOrigin}/frame`)}`);
    const readable = await reader.locator("iframe").evaluate((frame: { contentDocument: unknown }) => frame.contentDocument !== null);
    const framed = reader.frames().find((frame) => frame.url() === `${otherOrigin}/frame`);

    // Assess
    expect(readable).toBe(false);
    // The frame did load the other site's page: only the reading was refused.
    expect(await framed?.textContent("p")).toBe(secret);
  });

  it("runs without --disable-web-security on its command line", async () => {
    // Prepare
    browser = await chromium.launch();

    // Act
    const commandLine = commandLineOf(await browserPid(browser));

    // Assess
    expect(commandLine?.some((arg) => arg.includes("--headless"))).toBe(true);
    expect(commandLine?.some((arg) => arg.startsWith("--disable-web-security"))).toBe(false);
  });

  it("leaves no browser process behind once closed", async () => {
    // Prepare
    const opened = await chromium.launch();
    const pid = await browserPid(opened);

    // Act
    await opened.close();

    // Assess
    await eventually(async () => (commandLineOf(pid) === undefined ? true : undefined), `browser ${pid} to exit`);
  });
});
