import { createServer, connect, type Server } from "node:net";
import { createServer as createHttpServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { Resolver } from "#shared/policy/addresses.ts";
import type { Endpoint } from "#shared/login/http/client.ts";
import type { LoginTarget } from "#shared/login/types.ts";

/**
 * The SSRF guard in AWS mode (allowPrivateTargets: false). Names resolve through a stub resolver,
 * and the only wire is `openSocket`: direct refusals must never reach it, and the redirect tests
 * route the one public address they vet (any public address would do; documentation ranges are
 * refused) to a loopback server standing in for "the internet". No packet leaves loopback.
 */

const publicShop = "93.184.215.14";
const zones: Record<string, string[]> = {
  "shop.example": [publicShop],
  "loopback.example": ["127.0.0.1"],
  "private.example": ["10.0.0.1"],
  "metadata.example": ["169.254.169.254"],
  "loopback.shop.example": ["127.0.0.1"],
  "internal.shop.example": ["10.0.0.1"],
  "metadata.shop.example": ["169.254.169.254"],
  "mixed.example": [publicShop, "10.0.0.1"],
};

function stubResolver(overrides: Record<string, () => string[]> = {}) {
  const asked: string[] = [];
  const resolver: Resolver = async (host) => {
    asked.push(host);
    const addresses = overrides[host]?.() ?? zones[host];
    if (!addresses) throw Object.assign(new Error(`no such host ${host}`), { code: "ENOTFOUND" });
    return addresses;
  };
  return { resolver, asked };
}

function awsEngine(options: { openSocket?: (endpoint: Endpoint) => ReturnType<typeof connect>; overrides?: Record<string, () => string[]> } = {}) {
  const connects: string[] = [];
  const { resolver, asked } = stubResolver(options.overrides);
  const engine = createLoginEngine({
    allowPrivateTargets: false,
    resolver,
    onConnect: (address) => connects.push(address),
    openSocket:
      options.openSocket ??
      (() => {
        throw new Error("no socket may be opened in this test");
      }),
  });
  return { engine, connects, asked };
}

const targetFor = (loginUrl: string, allowedDomains: string[] = []): LoginTarget => ({
  domain: new URL(loginUrl).hostname.replace(/^\[|\]$/g, ""),
  loginUrl,
  allowedDomains,
});

describe("SSRF guard: login_url", () => {
  it.each([
    ["http://127.0.0.1/login", "refused to connect to 127.0.0.1: a loopback address, which this deployment does not reach"],
    ["http://10.0.0.1/login", "refused to connect to 10.0.0.1: a private address, which this deployment does not reach"],
    ["http://169.254.169.254/latest/meta-data/", "refused to connect to 169.254.169.254: a link-local address, which this deployment does not reach"],
    ["http://[::ffff:127.0.0.1]/login", "refused to connect to ::ffff:7f00:1: a loopback address, which this deployment does not reach"],
    ["http://localhost/login", "refused to connect to localhost: it resolves to 127.0.0.1, a loopback address, which this deployment does not reach"],
    ["https://loopback.example/login", "refused to connect to loopback.example: it resolves to 127.0.0.1, a loopback address, which this deployment does not reach"],
    ["https://private.example/login", "refused to connect to private.example: it resolves to 10.0.0.1, a private address, which this deployment does not reach"],
    ["https://metadata.example/login", "refused to connect to metadata.example: it resolves to 169.254.169.254, a link-local address, which this deployment does not reach"],
    ["https://mixed.example/login", "refused to connect to mixed.example: it resolves to 10.0.0.1, a private address, which this deployment does not reach"],
  ])("%s is refused before any socket", async (loginUrl, message) => {
    const { engine, connects } = awsEngine();

    const outcome = await engine.start(targetFor(loginUrl));

    expect(outcome).toEqual({ kind: "failure", errorCode: "site_unreachable", message });
    expect(connects).toEqual([]);
  });

  it("the health probe refuses the same way: unreachable, no socket", async () => {
    const { engine, connects } = awsEngine();
    const probe = await engine.probe(targetFor("https://private.example/"), { cookies: [], origins: [] }, "https://private.example/account", null);
    expect(probe).toEqual({ state: "unreachable", reason: expect.stringContaining("it resolves to 10.0.0.1, a private address") });
    expect(connects).toEqual([]);
  });

  it.each([
    ["http://shop.example:8080/login", "shop.example:8080: port 8080"],
    ["https://shop.example:8443/login", "shop.example:8443: port 8443"],
    ["http://shop.example:22/", "shop.example:22: port 22"],
    ["http://localhost:8080/login", "localhost:8080: port 8080"],
  ])("%s is refused for its port before it is even resolved", async (loginUrl, refusal) => {
    const { engine, connects, asked } = awsEngine();

    const outcome = await engine.start(targetFor(loginUrl));

    expect(outcome).toEqual({
      kind: "failure",
      errorCode: "unsupported_auth_method",
      message: `refused to follow a link: ${refusal} is not 80 or 443, the only ports this deployment connects to`,
    });
    expect(connects).toEqual([]);
    expect(asked).toEqual([]);
  });

  it("the health probe refuses another port the same way: unreachable, no socket", async () => {
    const { engine, connects, asked } = awsEngine();
    const probe = await engine.probe(targetFor("https://shop.example/"), { cookies: [], origins: [] }, "https://shop.example:8443/account", null);
    expect(probe).toEqual({ state: "unreachable", reason: expect.stringContaining("port 8443 is not 80 or 443") });
    expect(connects).toEqual([]);
    expect(asked).toEqual([]);
  });

  it("local mode still refuses the metadata address", async () => {
    const connects: string[] = [];
    const engine = createLoginEngine({ allowPrivateTargets: true, onConnect: (address) => connects.push(address), openSocket: () => {
      throw new Error("no socket may be opened in this test");
    } });
    expect(await engine.start(targetFor("http://169.254.169.254/latest/meta-data/"))).toMatchObject({ kind: "failure", errorCode: "site_unreachable" });
    expect(connects).toEqual([]);
  });
});

describe("SSRF guard: redirects", () => {
  let internet: Server;
  let internetPort: number;
  const requests: string[] = [];

  beforeAll(async () => {
    const pages = createHttpServer((request, response) => {
      requests.push(`${request.headers.host}${request.url}`);
      const to = new URL(request.url!, "http://shop.example").searchParams.get("to");
      if (to) response.writeHead(302, { location: to }).end();
      else response.writeHead(200, { "content-type": "text/html" }).end("<form method=post><input name=email><input type=password name=password></form>");
    });
    internet = createServer((socket) => pages.emit("connection", socket));
    await new Promise<void>((resolve) => internet.listen(0, "127.0.0.1", resolve));
    internetPort = (internet.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => internet.close(resolve));
  });

  /** The wire for vetted addresses: only shop.example's public address exists, and it is our loopback server. */
  const toLoopbackStandIn = (endpoint: Endpoint) => {
    if (endpoint.address !== publicShop) throw new Error(`the test internet has no ${endpoint.address}`);
    return connect({ host: "127.0.0.1", port: internetPort });
  };

  it("the stand-in answers for the allowed public name", async () => {
    const { engine, connects } = awsEngine({ openSocket: toLoopbackStandIn });
    const outcome = await engine.start(targetFor("http://shop.example/login"));
    expect(outcome).toMatchObject({ kind: "input", prompt: { fields: [{ id: "identifier" }, { id: "password" }] } });
    expect(connects).toEqual([publicShop]);
  });

  it.each([
    ["http://loopback.shop.example/admin", [], "refused to connect to loopback.shop.example: it resolves to 127.0.0.1, a loopback address"],
    ["http://internal.shop.example/", [], "refused to connect to internal.shop.example: it resolves to 10.0.0.1, a private address"],
    ["http://metadata.shop.example/latest/meta-data/", [], "refused to connect to metadata.shop.example: it resolves to 169.254.169.254, a link-local address"],
    ["http://127.0.0.1/admin", ["127.0.0.1"], "refused to connect to 127.0.0.1: a loopback address"],
    ["http://10.0.0.1/", ["10.0.0.1"], "refused to connect to 10.0.0.1: a private address"],
    ["http://169.254.169.254/latest/meta-data/", ["169.254.169.254"], "refused to connect to 169.254.169.254: a link-local address"],
  ])("a redirect to %s is refused after one socket (to the public host)", async (to, allowedDomains, message) => {
    const { engine, connects } = awsEngine({ openSocket: toLoopbackStandIn });
    requests.length = 0;

    const outcome = await engine.start(targetFor(`http://shop.example/login?to=${encodeURIComponent(to)}`, allowedDomains));

    expect(outcome).toEqual({ kind: "failure", errorCode: "site_unreachable", message: `${message}, which this deployment does not reach` });
    expect(connects).toEqual([publicShop]);
    expect(requests).toEqual([`shop.example/login?to=${encodeURIComponent(to)}`]);
  });

  it("a redirect outside the domain is refused by scope before it is even resolved", async () => {
    const { engine, connects, asked } = awsEngine({ openSocket: toLoopbackStandIn });
    const outcome = await engine.start(targetFor(`http://shop.example/login?to=${encodeURIComponent("http://169.254.169.254/latest/meta-data/")}`));
    expect(outcome).toEqual({
      kind: "failure",
      errorCode: "unsupported_auth_method",
      message: expect.stringMatching(/^refused to follow a link: 169\.254\.169\.254 is outside the connection's domain/),
    });
    expect(connects).toEqual([publicShop]);
    expect(asked).toEqual(["shop.example"]);
  });

  it.each(["http://shop.example:80/login", "http://shop.example:443/login"])("%s, on one of the web's ports, reaches the stand-in", async (loginUrl) => {
    const { engine, connects } = awsEngine({ openSocket: toLoopbackStandIn });
    const outcome = await engine.start(targetFor(loginUrl));
    expect(outcome).toMatchObject({ kind: "input" });
    expect(connects).toEqual([publicShop]);
  });

  it("a redirect to another port of the same host is refused after one socket", async () => {
    const { engine, connects } = awsEngine({ openSocket: toLoopbackStandIn });
    const outcome = await engine.start(targetFor(`http://shop.example/login?to=${encodeURIComponent("http://shop.example:8080/admin")}`));
    expect(outcome).toEqual({
      kind: "failure",
      errorCode: "unsupported_auth_method",
      message: "refused to follow a link: shop.example:8080: port 8080 is not 80 or 443, the only ports this deployment connects to",
    });
    expect(connects).toEqual([publicShop]);
  });

  it("local mode keeps any port", async () => {
    const connects: string[] = [];
    const { resolver } = stubResolver();
    const engine = createLoginEngine({ allowPrivateTargets: true, resolver, onConnect: (address) => connects.push(address), openSocket: toLoopbackStandIn });
    const outcome = await engine.start(targetFor("http://shop.example:8080/login"));
    expect(outcome).toMatchObject({ kind: "input" });
    expect(connects).toEqual([publicShop]);
  });

  it("every hop is resolved again: a name that turns private between hops is refused (DNS rebinding)", async () => {
    let lookups = 0;
    const { engine, connects } = awsEngine({
      openSocket: toLoopbackStandIn,
      overrides: { "shop.example": () => (++lookups === 1 ? [publicShop] : ["127.0.0.1"]) },
    });
    const outcome = await engine.start(targetFor(`http://shop.example/start?to=${encodeURIComponent("http://shop.example/login")}`));
    expect(outcome).toMatchObject({ kind: "failure", errorCode: "site_unreachable", message: expect.stringContaining("it resolves to 127.0.0.1") });
    expect(connects).toEqual([publicShop]);
  });
});
