import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { captureBrowserState } from "#shared/login/browser/browser-state.ts";
import { appsDir, forgedValue, freePort, run, serve, stopProcess, waitForHttp, type CorpusApp, type CorpusTools, type RunningApp, type Session, withPage } from "./app.ts";

const version = "26.9.0";
const root = join(appsDir, "actual");
const installDir = join(root, version);
const entry = join(installDir, "node_modules/@actual-app/sync-server/build/bin/actual-server.js");
const webScripts = join(installDir, "node_modules/@actual-app/web/build/static/js");
const dataDir = join(root, "data");
const configFile = join(dataDir, "config.json");
const accountDb = join(dataDir, "server-files/account.sqlite");
/** Password-only: the server has one password and no user names; the name is the credential's, never asked. */
const user = { username: "corpus", password: "corpus-actual-password" };

/** The web client asks GitHub for the latest release when it opens a budget: answered "unknown" instead. */
const updateCheck = "fetch(`https://api.github.com/repos/actualbudget/actual/releases/latest`)";
const updateCheckOff = "Promise.reject(Error(`no update check in the corpus`))";

/** Its script bundle takes seconds to parse before the client asks the server anything. */
const viewWaitMs = 60_000;

/** The npm package of this Node's own build, which holds its C++ headers (`include/node`). */
const nodeBuild = `node-${process.platform}-${process.arch}`;

/**
 * Serves on loopback, password login only, the CORS proxy off (it fetches a plugin list from
 * GitHub); bank sync and OpenID stay unconfigured, so the server calls out to nobody.
 */
function config(port: number): string {
  return JSON.stringify(
    {
      hostname: "127.0.0.1",
      port,
      dataDir,
      serverFiles: join(dataDir, "server-files"),
      userFiles: join(dataDir, "user-files"),
      loginMethod: "password",
      allowedLoginMethods: ["password"],
      corsProxy: { enabled: false },
    },
    null,
    2,
  );
}

/** Which of its views the client drew: its sign-in form, or the signed-in welcome of a server with no budget yet. */
async function drawnView(page: Page): Promise<"signed-in" | "sign-in"> {
  const password = page.locator("input[type=password]");
  const signedIn = page.getByRole("button", { name: "Start budgeting" });
  await password.or(signedIn).first().waitFor({ timeout: viewWaitMs });
  return (await password.isVisible()) ? "sign-in" : "signed-in";
}

/** The IndexedDB records of `session` whose key is `key`, through `change`; the rest as they are. */
function withRecord(session: Session, key: string, change: (value: unknown) => unknown): Session {
  return {
    ...session,
    origins: session.origins.map((origin) => ({
      ...origin,
      indexedDB: origin.indexedDB?.map((database) => ({
        ...database,
        stores: database.stores.map((store) => ({
          ...store,
          records: store.records.map((record) => (record["key"] === key ? { ...record, value: change(record["value"]) } : record)),
        })),
      })),
    })),
  };
}

/** The session's token for the app at `url`: what its client sends as `X-ACTUAL-TOKEN`. */
function tokenOf(session: Session, url: string): string | null {
  const origin = session.origins.find((each) => each.origin === new URL(url).origin);
  const store = origin?.indexedDB?.find((database) => database.name === "actual")?.stores.find((each) => each.name === "asyncStorage");
  const token = store?.records.find((record) => record["key"] === "user-token")?.["value"];
  return typeof token === "string" ? token : null;
}

/**
 * Actual Budget's sync server 26.9.0 (npm), which serves its web client (`@actual-app/web`): one
 * server password, set at first start through its bootstrap API. The client parses several
 * megabytes of script before it asks the server whether a login is needed and draws a password-only
 * form; the session is a token the client's worker keeps in IndexedDB (`actual` / `asyncStorage` /
 * `user-token`), which the server keeps in its `sessions` table.
 */
export function actual(): CorpusApp {
  let server: ChildProcess | undefined;
  let browser: Browser;
  let url = "";

  async function launch(): Promise<void> {
    server = serve(process.execPath, [entry, "--config", configFile], {
      cwd: dataDir,
      env: { PATH: process.env.PATH, HOME: dataDir, NODE_ENV: "production" },
      logFile: join(root, "actual.log"),
    });
    await waitForHttp(`${url}health`, (response) => response.status === 200, server);
  }

  // The server offers no API that ends password sessions (a new password keeps them): its sessions
  // table in the data directory is emptied, which every request reads. Node's SQLite is loaded only
  // here, so that its experimental-feature warning is printed only for this app.
  async function endSessions(): Promise<void> {
    const { DatabaseSync } = await import("node:sqlite");
    const database = new DatabaseSync(accountDb, { timeout: 10_000 });
    try {
      database.prepare("DELETE FROM sessions").run();
    } finally {
      database.close();
    }
  }


  return {
    name: "actual",
    description: `Actual Budget's sync server ${version} (npm) serving its web client: a password-only login drawn late by a heavy script bundle, the session a token in IndexedDB`,

    async install() {
      if (existsSync(entry)) return;
      const partial = `${installDir}.partial`;
      rmSync(partial, { recursive: true, force: true });
      mkdirSync(partial, { recursive: true });
      // better-sqlite3 fetches a prebuilt binary from GitHub, which this machine cannot reach, and
      // then builds itself with node-gyp: against this Node's own headers, from the registry's
      // package of this Node's build, so that it loads in the Node that runs the server.
      const headers = join(root, `${nodeBuild}-${process.versions.node}`);
      const nodeDir = join(headers, "node_modules", nodeBuild);
      if (!existsSync(join(nodeDir, "include/node/node_version.h"))) {
        mkdirSync(headers, { recursive: true });
        writeFileSync(join(headers, "package.json"), JSON.stringify({ private: true, dependencies: { [nodeBuild]: process.versions.node } }, null, 2));
        await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: headers });
      }
      writeFileSync(join(partial, "package.json"), JSON.stringify({ private: true, dependencies: { "@actual-app/sync-server": version } }, null, 2));
      await run("npm", ["install", "--no-audit", "--no-fund", "--omit=dev"], { cwd: partial, env: { ...process.env, npm_config_nodedir: nodeDir } });
      const scripts = join(partial, "node_modules/@actual-app/web/build/static/js");
      const patched = readdirSync(scripts).filter((name) => name.endsWith(".js") && readFileSync(join(scripts, name), "utf8").includes(updateCheck));
      if (patched.length === 0) throw new Error(`no script of @actual-app/web ${version} holds its update check: the pinned version changed?`);
      for (const name of patched) writeFileSync(join(scripts, name), readFileSync(join(scripts, name), "utf8").replaceAll(updateCheck, updateCheckOff));
      rmSync(installDir, { recursive: true, force: true });
      await run("mv", [partial, installDir]);
    },

    async start(tools: CorpusTools): Promise<RunningApp> {
      browser = tools.browser;
      if (readdirSync(webScripts).some((name) => name.endsWith(".js") && readFileSync(join(webScripts, name), "utf8").includes(updateCheck))) {
        throw new Error(`the web client's update check is still on in ${webScripts}`);
      }
      rmSync(dataDir, { recursive: true, force: true });
      mkdirSync(dataDir, { recursive: true });
      const port = await freePort();
      writeFileSync(configFile, config(port));
      url = `http://127.0.0.1:${port}/`;
      await launch();
      const bootstrap = await fetch(`${url}account/bootstrap`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ password: user.password }),
      });
      if (!bootstrap.ok) throw new Error(`the bootstrap API answered ${bootstrap.status}: ${await bootstrap.text()}`);
      // The bootstrap signs in too: that session goes, so the seeded server starts with none.
      await endSessions();
      return { url, loginUrl: url, ...user, wrongPassword: /^Invalid password$/ };
    },

    async signIn() {
      return withPage(browser, url, { cookies: [], origins: [] }, async (page) => {
        if ((await drawnView(page)) !== "sign-in") throw new Error("a fresh browser was not asked to sign in");
        await page.fill("input[type=password]", user.password);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("button", { name: "Start budgeting" }).waitFor({ timeout: viewWaitMs });
        return captureBrowserState(page.context());
      });
    },

    forge(session) {
      // A token of the same form (a UUID): each group of hex digits replaced.
      return withRecord(session, "user-token", (token) => String(token).split("-").map(forgedValue).join("-"));
    },

    // Asked over HTTP, as the client asks at start: one request, where a page load of its client costs
    // a hundred or more against the server's limit of 500 requests a minute from one address.
    async signedIn(session) {
      const token = tokenOf(session, url);
      if (token === null) return false;
      const response = await fetch(`${url}account/validate`, { headers: { "x-actual-token": token } });
      if (response.status === 401) return false;
      if (response.status !== 200) throw new Error(`/account/validate answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { data?: { validated?: boolean } }).data?.validated === true;
    },

    async logoutEverywhere() {
      await endSessions();
    },

    async stop() {
      await stopProcess(server);
    },
  };
}
