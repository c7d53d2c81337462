import { randomBytes } from "node:crypto";
import { beforeEach, describe, expect, inject, it } from "vitest";
import type { BrowserProvider, LaunchSpec } from "#shared/domain/browser-provider.ts";
import type { StartUrlAddressPolicy } from "#shared/domain/pool.ts";
import { poolFiller } from "#shared/domain/pool-filler.ts";
import { poolsCore } from "#shared/domain/pools.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { tableClientAt } from "../support/stack.ts";

const org = "org-start-url";

/** DNS as the test says it answers: no query leaves the process. */
let dns: Record<string, string[]>;
const resolved: string[] = [];
const awsMode: StartUrlAddressPolicy = {
  allowPrivateTargets: false,
  async resolve(host) {
    resolved.push(host);
    const answer = dns[host];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return answer;
  },
};

let store: ReturnType<typeof dynamoPoolStore>;
let launches: LaunchSpec[];
/** Records what each browser was started at; every launched browser keeps running. */
const recordingBrowsers: BrowserProvider = {
  async launch(spec) {
    launches.push(spec);
    return { ref: spec.sessionId, cdpWsUrl: `ws://127.0.0.1:1/devtools/browser/${spec.sessionId}`, headless: true };
  },
  async destroy() {},
  async running() {
    return launches.map((spec) => spec.sessionId);
  },
  async grantLease() {},
  async endLease() {},
};

const cores = (startUrlAddresses?: StartUrlAddressPolicy) => {
  const deps = { pools: store, browsers: recordingBrowsers, startUrlAddresses };
  return { core: poolsCore({ ...deps, resolveProfile: async () => "unused" }), filler: poolFiller(deps) };
};

beforeEach(async () => {
  const tableName = `start-url-${randomBytes(6).toString("hex")}`;
  await ensureTable(inject("dynamoEndpoint"), tableName);
  store = dynamoPoolStore(tableClientAt(inject("dynamoEndpoint")), tableName);
  launches = [];
  resolved.length = 0;
  dns = { "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"] };
});

const refusedWith = (mentions: string) => ({ code: "bad_request", message: expect.stringContaining(mentions) });

describe("a pool's start_url at create and update", () => {
  const refusedSchemes = ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,x", "x-unknown:thing", "ftp://public.example/", "view-source:https://public.example/"];

  it.each(refusedSchemes)("refuses %s with 400 naming start_url, in either mode, and keeps nothing", async (startUrl) => {
    for (const { core } of [cores(), cores(awsMode)]) {
      const existing = await core.create(org, { size: 1, start_url: "https://public.example/" });
      await expect(core.create(org, { size: 1, start_url: startUrl })).rejects.toMatchObject(refusedWith("start_url"));
      await expect(core.update(org, existing.id, { start_url: startUrl })).rejects.toMatchObject(refusedWith("start_url"));
      const { items } = await core.list(org, { limit: 10, offset: 0 });
      expect(items).toEqual([await core.get(org, existing.id)]);
      expect(items[0]?.browser_pool_config.start_url).toBe("https://public.example/");
      await core.remove(org, existing.id, true);
    }
    expect(resolved).toEqual(["public.example"]);
  });

  it("accepts web pages, about: and chrome: pages", async () => {
    const { core } = cores(awsMode);
    for (const startUrl of ["chrome://version", "about:blank", "https://public.example/login", "http://public.example:8080/"]) {
      const pool = await core.create(org, { size: 1, start_url: startUrl });
      expect(pool.browser_pool_config.start_url).toBe(startUrl);
    }
    const pool = await core.create(org, { size: 1 });
    expect((await core.update(org, pool.id, { start_url: "chrome://version" })).browser_pool_config.start_url).toBe("chrome://version");
    expect((await core.update(org, pool.id, { start_url: "about:blank" })).browser_pool_config.start_url).toBe("about:blank");
  });

  it("in AWS mode refuses a host that is, or resolves to, an address the login engine does not reach", async () => {
    dns["metadata.example"] = ["169.254.169.254"];
    dns["half-inward.example"] = ["93.184.215.14", "10.0.0.5"];
    const { core } = cores(awsMode);
    // The address classes' names belong to the address policy's own tests.
    const refused: Array<[startUrl: string, mentions: string]> = [
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254: a"],
      ["http://2852039166/latest/meta-data/", "169.254.169.254: a"],
      ["http://[::ffff:a9fe:a9fe]/", "::ffff:a9fe:a9fe: a"],
      ["http://[fd00:ec2::254]/", "fd00:ec2::254: a"],
      ["https://metadata.example/", "metadata.example: it resolves to 169.254.169.254, a"],
      ["https://half-inward.example/", "half-inward.example: it resolves to 10.0.0.5, a"],
      ["http://localhost:3000/", "localhost: it resolves to 127.0.0.1, a"],
      ["http://127.0.0.1:3000/", "127.0.0.1: a"],
      ["http://0.0.0.0/", "0.0.0.0: a"],
    ];
    for (const [startUrl, mentions] of refused) {
      await expect(core.create(org, { size: 1, start_url: startUrl }), startUrl).rejects.toMatchObject(refusedWith(`start_url: ${mentions}`));
    }
    // Literals stand for themselves, and localhost is loopback whatever DNS would say, as for the login engine.
    expect(resolved).toEqual(["metadata.example", "half-inward.example"]);
    const pool = await core.create(org, { size: 1, start_url: "https://public.example/" });
    await expect(core.update(org, pool.id, { start_url: "https://metadata.example/" })).rejects.toMatchObject(refusedWith("169.254.169.254"));
    expect((await core.get(org, pool.id)).browser_pool_config.start_url).toBe("https://public.example/");
    expect((await core.list(org, { limit: 10, offset: 0 })).items).toHaveLength(1);
  });

  it("in AWS mode accepts a host that does not resolve yet: the launch checks it again", async () => {
    const { core } = cores(awsMode);
    const pool = await core.create(org, { size: 1, start_url: "https://not-yet.example/" });
    expect(pool.browser_pool_config.start_url).toBe("https://not-yet.example/");
    expect(resolved).toEqual(["not-yet.example"]);
  });

  it("in local mode launches at loopback and private hosts and resolves nothing", async () => {
    const { core } = cores();
    for (const startUrl of ["http://127.0.0.1:3000/", "http://localhost:3000/", "http://10.0.0.5/"]) {
      expect((await core.create(org, { size: 1, start_url: startUrl })).browser_pool_config.start_url).toBe(startUrl);
    }
    expect(resolved).toEqual([]);
  });
});

describe("a pool's start_url at launch", () => {
  const launchedAt = async (filler: ReturnType<typeof cores>["filler"], poolId: string) => {
    await filler.tick();
    const snapshot = await store.read(org, poolId);
    return { specs: launches.map((spec) => spec.startUrl), records: snapshot?.browsers.map((browser) => browser.start_url) };
  };

  it("starts the browser blank when the host resolves to a refused address by then", async () => {
    const { core, filler } = cores(awsMode);
    dns["moved.example"] = ["93.184.215.14"];
    const pool = await core.create(org, { size: 1, start_url: "https://moved.example/" });
    dns["moved.example"] = ["169.254.169.254"];
    expect(await launchedAt(filler, pool.id)).toEqual({ specs: [null], records: [null] });
  });

  it("starts the browser blank when the host does not resolve at launch", async () => {
    const { core, filler } = cores(awsMode);
    const pool = await core.create(org, { size: 1, start_url: "https://not-yet.example/" });
    expect(await launchedAt(filler, pool.id)).toEqual({ specs: [null], records: [null] });
  });

  it("starts the browser blank for a stored start_url that the check refuses", async () => {
    const { core, filler } = cores();
    const pool = await core.create(org, { size: 1 });
    await store.update(org, pool.id, { start_url: "file:///etc/passwd" }, new Date().toISOString());
    expect(await launchedAt(filler, pool.id)).toEqual({ specs: [null], records: [null] });
  });

  it("starts the browser at a start URL that passes the check", async () => {
    const { core, filler } = cores(awsMode);
    const pool = await core.create(org, { size: 1, start_url: "https://public.example/login" });
    expect(await launchedAt(filler, pool.id)).toEqual({ specs: ["https://public.example/login"], records: ["https://public.example/login"] });
  });
});
