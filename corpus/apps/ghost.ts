import type { ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { captureBrowserState } from "#shared/login/browser/browser-state.ts";
import { cookieHeader } from "../../test/support/login-flows.ts";
import { appsDir, forgedValue, freePort, run, serve, stopProcess, waitForHttp, type CorpusApp, type CorpusTools, type RunningApp, withPage } from "./app.ts";

const version = "6.65.0";
const root = join(appsDir, "ghost");
const installDir = join(root, version);
const entry = join(installDir, "index.js");
const sqliteBinding = join(installDir, "node_modules/better-sqlite3/build/Release/better_sqlite3.node");
/** Node's headers for the running version, from the registry's `node-<platform>-<arch>` package: node-gyp would fetch them from nodejs.org. */
const nodeHeaders = join(root, `node-${process.versions.node}`);
const home = join(root, "home");
const database = join(home, "content/data/ghost.db");
/** Ghost's own checks refuse a password that contains the site's or the user's name. */
const user = { name: "Corpus User", username: "corpus@example.com", password: "Vq7-lantern-Orbit-2291" };
const sessionCookie = "ghost-admin-api-session";
const signedInWaitMs = 60_000;

/**
 * Served on loopback, every call past it off before the first start: privacy's tinfoil mode (update
 * check, gravatar, RPC pings, structured data), the Explore ping and its testimonials, machine
 * payments, e-mail analytics; mail goes to nodemailer's stub transport, so staff device
 * verification (a code sent by mail) is off. The scripts it would load from a CDN point at a closed
 * port on loopback.
 */
function config(port: number, closedPort: number): string {
  const nowhere = `http://127.0.0.1:${closedPort}`;
  const script = (name: string) => ({ url: `${nowhere}/${name}.min.js`, styles: `${nowhere}/${name}.css` });
  const settings = {
    url: `http://127.0.0.1:${port}`,
    server: { host: "127.0.0.1", port },
    database: { client: "better-sqlite3", connection: { filename: database }, useNullAsDefault: true },
    paths: { contentPath: join(home, "content") },
    mail: { transport: "stub", from: "corpus@127.0.0.1" },
    logging: { level: "info", transports: ["stdout"] },
    privacy: { useTinfoil: true, useUpdateCheck: false, useGravatar: false, useRpcPing: false, useStructuredData: false },
    security: { staffDeviceVerification: false },
    updateCheck: { url: nowhere },
    explore: { update_url: "", testimonials_url: "" },
    machinePayments: { x402: { enabled: false } },
    emailAnalytics: { enabled: false },
    backgroundJobs: { emailAnalytics: false },
    portal: script("portal"),
    sodoSearch: script("sodo-search"),
    announcementBar: script("announcement-bar"),
    comments: script("comments-ui"),
    adminToolbar: script("admin-toolbar"),
    signupForm: script("signup-form"),
  };
  return JSON.stringify(settings, null, 2);
}

/** Ghost's database driver, built by `install`, as the runner's own handle on the app's data. */
function openDatabase(): { prepare(sql: string): { run(...values: unknown[]): unknown }; close(): void } {
  const Database = createRequire(join(installDir, "package.json"))("better-sqlite3");
  return new Database(database, { timeout: 10_000 });
}

/**
 * Ghost 6.65.0 (npm), a publishing platform, in production mode on SQLite, its owner seeded through
 * its setup API. Its admin is an Ember app that draws the sign-in form (e-mail and password) after
 * its scripts load; the session is a cookie (`ghost-admin-api-session`, path `/ghost`) whose row is
 * in the `sessions` table; a wrong password is an inline message under the form.
 */
export function ghost(): CorpusApp {
  let server: ChildProcess | undefined;
  let browser: Browser;
  let base = "";
  const admin = () => `${base}/ghost/`;
  const me = () => `${base}/ghost/api/admin/users/me/`;

  async function launch(): Promise<void> {
    server = serve(process.execPath, [join(home, "current/index.js")], {
      cwd: home,
      env: { PATH: process.env.PATH, HOME: home, NODE_ENV: "production" },
      logFile: join(root, "ghost.log"),
    });
    await waitForHttp(`${base}/ghost/api/admin/authentication/setup/`, (response) => response.status === 200, server);
  }

  return {
    name: "ghost",
    description: `Ghost ${version} (npm), a publishing platform on SQLite: an e-mail and password form drawn late by its Ember admin, the session a cookie; a wrong password an inline message`,

    async install() {
      if (existsSync(entry) && existsSync(sqliteBinding)) return;
      const partial = `${installDir}.partial`;
      const download = join(root, "download");
      for (const dir of [partial, download]) rmSync(dir, { recursive: true, force: true });
      mkdirSync(download, { recursive: true });
      // The package is meant to be unpacked and installed in its own folder (as Ghost-CLI does): its
      // dependencies include `file:components/...` archives inside it.
      await run("npm", ["pack", `ghost@${version}`, "--pack-destination", download], { cwd: download });
      await run("tar", ["xzf", join(download, `ghost-${version}.tgz`), "-C", download]);
      renameSync(join(download, "package"), partial);
      rmSync(download, { recursive: true, force: true });
      // Scripts off: prebuilt binaries are fetched from GitHub. Peer dependencies as Ghost's own
      // pnpm lock has them (bookshelf's peer range predates the knex it runs with).
      await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev", "--legacy-peer-deps"], { cwd: partial });
      if (!existsSync(join(nodeHeaders, "package.json"))) {
        mkdirSync(nodeHeaders, { recursive: true });
        writeFileSync(join(nodeHeaders, "package.json"), JSON.stringify({ private: true, dependencies: { [`node-${process.platform}-${process.arch}`]: process.versions.node } }, null, 2));
        await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: nodeHeaders });
      }
      // Its SQLite driver built from source for this Node, against the headers above. node-gyp takes
      // npm's settings from the environment over its own arguments, and `npm run` passes the system
      // npm's (Debian's names the system Node's headers): the headers are given that way.
      await run(process.execPath, [join(partial, "node_modules/node-gyp/bin/node-gyp.js"), "rebuild", "--release"], {
        cwd: join(partial, "node_modules/better-sqlite3"),
        env: { ...process.env, npm_config_nodedir: join(nodeHeaders, "node_modules", `node-${process.platform}-${process.arch}`) },
      });
      rmSync(installDir, { recursive: true, force: true });
      renameSync(partial, installDir);
    },

    async start(tools: CorpusTools): Promise<RunningApp> {
      browser = tools.browser;
      rmSync(home, { recursive: true, force: true });
      mkdirSync(home, { recursive: true });
      // Ghost-CLI's layout: the config and content in the site's folder, the release behind `current`.
      symlinkSync(installDir, join(home, "current"));
      cpSync(join(installDir, "content"), join(home, "content"), { recursive: true });
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      writeFileSync(join(home, "config.production.json"), config(port, await freePort()));
      await launch();
      const setup = await fetch(`${base}/ghost/api/admin/authentication/setup/`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: base },
        body: JSON.stringify({ setup: [{ name: user.name, email: user.username, password: user.password, blogTitle: "Corpus" }] }),
      });
      if (setup.status !== 201) throw new Error(`Ghost's setup answered ${setup.status}: ${(await setup.text()).slice(0, 500)}`);
      return { url: admin(), loginUrl: admin(), username: user.username, password: user.password, wrongPassword: /Your password is incorrect/ };
    },

    async signIn() {
      return withPage(browser, admin(), { cookies: [], origins: [] }, async (page) => {
        await page.fill("#identification", user.username, { timeout: signedInWaitMs });
        await page.fill("#password", user.password);
        await page.click("button[type=submit]");
        await page.waitForURL((address) => !address.hash.startsWith("#/signin"), { timeout: signedInWaitMs });
        return captureBrowserState(page.context());
      });
    },

    forge(session) {
      return { ...session, cookies: session.cookies.map((cookie) => (cookie.name === sessionCookie ? { ...cookie, value: forgedValue(cookie.value) } : cookie)) };
    },

    // The admin API answers the signed-in user, and refuses a request without a session; it wants
    // the site's origin, as its own admin app sends it.
    async signedIn(session) {
      const response = await fetch(me(), { headers: { cookie: cookieHeader(session, me()), origin: base }, redirect: "manual" });
      if (response.status === 200) return true;
      if (response.status === 401 || response.status === 403) return false;
      throw new Error(`${me()} answered ${response.status}`);
    },

    // Ghost keeps each admin session as a row of its `sessions` table, read on every request.
    async logoutEverywhere() {
      const db = openDatabase();
      try {
        db.prepare("DELETE FROM sessions WHERE user_id IN (SELECT id FROM users WHERE email = ?)").run(user.username);
      } finally {
        db.close();
      }
    },

    async stop() {
      await stopProcess(server);
    },
  };
}
