import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { captureBrowserState } from "#shared/login/browser/browser-state.ts";
import { appsDir, forgedValue, freePort, run, serve, stopProcess, waitForHttp, type CorpusApp, type CorpusTools, type RunningApp, type Session, withPage } from "./app.ts";

const version = "4.5.2";
const root = join(appsDir, "thelounge");
const installDir = join(root, version);
const entry = join(installDir, "node_modules/thelounge/index.js");
const home = join(root, "home");
const offline = join(import.meta.dirname, "thelounge-offline.cjs");
const user = { username: "corpus", password: "corpus-thelounge-password" };

/** The app's page once it has drawn either of its two views. */
const signedInView = "#sidebar";
const signInView = "#sign-in";
const viewWaitMs = 60_000;

/**
 * Private mode on loopback, nothing fetched or stored beyond the user's file; the network a
 * signed-in user is offered (and would connect to) is a closed port on loopback, never a real one.
 */
function config(port: number, ircPort: number): string {
  const settings = {
    public: false,
    host: "127.0.0.1",
    port,
    bind: "127.0.0.1",
    reverseProxy: false,
    prefetch: false,
    prefetchStorage: false,
    fileUpload: { enable: false },
    messageStorage: [],
    ldap: { enable: false },
    identd: { enable: false },
    lockNetwork: true,
    defaults: { name: "Loopback", host: "127.0.0.1", port: ircPort, password: "", tls: false, rejectUnauthorized: true, nick: "corpus", username: "corpus", realname: "", join: "" },
  };
  return `"use strict";\nmodule.exports = ${JSON.stringify(settings, null, 2)};\n`;
}

/** Which of its views the app drew for this page: signed in, or its sign-in form. */
async function drawnView(page: Page): Promise<"signed-in" | "sign-in"> {
  const view = await page.waitForSelector(`${signedInView}, ${signInView}`, { timeout: viewWaitMs });
  return (await view.getAttribute("id")) === "sidebar" ? "signed-in" : "sign-in";
}

/**
 * The Lounge 4.5.2 (npm), a web IRC client: private mode, users added with its CLI. A Vue app draws
 * its sign-in form (user name and password) and talks to the server over socket.io; the session is
 * a token it keeps in `localStorage`, which the server lists in the user's file.
 */
export function thelounge(): CorpusApp {
  let server: ChildProcess | undefined;
  let browser: Browser;
  let url = "";
  const env = () => ({ PATH: process.env.PATH, HOME: home, THELOUNGE_HOME: home, NODE_ENV: "production" });

  async function launch(): Promise<void> {
    server = serve(process.execPath, ["--require", offline, entry, "start"], { cwd: installDir, env: env(), logFile: join(root, "thelounge.log") });
    await waitForHttp(url, (response) => response.status === 200, server);
  }


  return {
    name: "thelounge",
    description: `The Lounge ${version} (npm), a web IRC client in private mode: a sign-in form drawn by a Vue app, the session a token in localStorage; after sign-in, a "Connect" form of its own`,

    async install() {
      if (existsSync(entry)) return;
      rmSync(installDir, { recursive: true, force: true });
      mkdirSync(installDir, { recursive: true });
      // The release names irc-framework by a GitHub commit, which this machine cannot fetch; the
      // registry's release of the same library stands in for it.
      writeFileSync(
        join(installDir, "package.json"),
        JSON.stringify({ private: true, dependencies: { thelounge: version }, overrides: { "irc-framework": "4.14.0" } }, null, 2),
      );
      await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev"], { cwd: installDir });
    },

    async start(tools: CorpusTools): Promise<RunningApp> {
      browser = tools.browser;
      rmSync(home, { recursive: true, force: true });
      mkdirSync(home, { recursive: true });
      const port = await freePort();
      // Its config is CommonJS, and the repository's package.json would make Node read it as a module.
      writeFileSync(join(home, "package.json"), JSON.stringify({ type: "commonjs" }));
      writeFileSync(join(home, "config.js"), config(port, await freePort()));
      // Its `add` command creates no users folder: without one it fails, and still exits 0.
      mkdirSync(join(home, "users"));
      await run(process.execPath, [entry, "add", user.username, "--password", user.password], { cwd: installDir, env: env() });
      if (!existsSync(join(home, "users", `${user.username}.json`))) throw new Error(`thelounge add left no user file (see ${join(root, "thelounge.log")})`);
      url = `http://127.0.0.1:${port}/`;
      await launch();
      return { url, loginUrl: url, ...user, wrongPassword: /Authentication failed/ };
    },

    async signIn() {
      return withPage(browser, url, { cookies: [], origins: [] }, async (page) => {
        if ((await drawnView(page)) !== "sign-in") throw new Error("a fresh browser was not asked to sign in");
        await page.fill("#signin-username", user.username);
        await page.fill("#signin-password", user.password);
        await page.click("button[type=submit]");
        await page.waitForSelector(signedInView, { timeout: viewWaitMs });
        return captureBrowserState(page.context());
      });
    },

    forge(session) {
      return {
        ...session,
        origins: session.origins.map((origin) => ({
          ...origin,
          localStorage: origin.localStorage.map((item) => (item.name === "token" ? { ...item, value: forgedValue(item.value) } : item)),
        })),
      };
    },

    async signedIn(session) {
      return withPage(browser, url, session, async (page) => (await drawnView(page)) === "signed-in");
    },

    // A running server keeps its users' sessions in memory: stopped, its `reset` command empties the
    // user's sessions (the password set again to the same), and the server starts with none.
    async logoutEverywhere() {
      await stopProcess(server);
      await run(process.execPath, [entry, "reset", user.username, "--password", user.password], { cwd: installDir, env: env() });
      await launch();
    },

    async stop() {
      await stopProcess(server);
    },
  };
}
