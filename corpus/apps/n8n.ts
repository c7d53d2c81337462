import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { totpCode } from "#shared/secrets/totp.ts";
import { cookieHeader } from "../../test/support/login-flows.ts";
import { appsDir, forgedValue, freePort, run, serve, stopProcess, waitForHttp, type CorpusApp, type RunningApp, type Session } from "./app.ts";

const version = "2.35.7";
const root = join(appsDir, "n8n");
const installDir = join(root, version);
const entry = join(installDir, "node_modules/n8n/bin/n8n");
const sqliteAddon = join(installDir, "node_modules/sqlite3/build/Release/node_sqlite3.node");
const home = join(root, "home");
const user = { username: "corpus@example.com", password: "Corpus-n8n-password-1" };
const authCookie = "n8n-auth";
/** The editor keeps an id of its own in `localStorage` and sends it with every call: the session's cookie is bound to it. */
const browserIdKey = "n8n-browserId";

/**
 * Every call n8n makes past this machine, off before its first start: telemetry and its front-end
 * config, version notifications, templates, the personalization survey, community packages, the AI
 * features, banners fetched from its servers, the license server's renewals, the modules that fetch
 * lists from api.n8n.io (the MCP servers' registry); everything on loopback.
 */
function env(port: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    N8N_USER_FOLDER: home,
    DB_TYPE: "sqlite",
    N8N_HOST: "127.0.0.1",
    N8N_LISTEN_ADDRESS: "127.0.0.1",
    N8N_PORT: String(port),
    N8N_PROTOCOL: "http",
    N8N_EDITOR_BASE_URL: `http://127.0.0.1:${port}/`,
    N8N_SECURE_COOKIE: "false",
    N8N_ENCRYPTION_KEY: "corpus-n8n-encryption-key",
    N8N_DIAGNOSTICS_ENABLED: "false",
    N8N_DIAGNOSTICS_CONFIG_FRONTEND: "",
    N8N_DIAGNOSTICS_CONFIG_BACKEND: "",
    N8N_VERSION_NOTIFICATIONS_ENABLED: "false",
    N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: "false",
    N8N_TEMPLATES_ENABLED: "false",
    N8N_PERSONALIZATION_ENABLED: "false",
    N8N_COMMUNITY_PACKAGES_ENABLED: "false",
    N8N_AI_ENABLED: "false",
    N8N_HIRING_BANNER_ENABLED: "false",
    N8N_DYNAMIC_BANNERS_ENABLED: "false",
    N8N_LICENSE_AUTO_RENEW_ENABLED: "false",
    N8N_DISABLED_MODULES: "mcp-registry,community-packages,instance-ai,workflow-builder,chat-hub",
    N8N_PUBLIC_API_DISABLED: "true",
    EXTERNAL_FRONTEND_HOOKS_URLS: "",
    N8N_RUNNERS_BROKER_LISTEN_ADDRESS: "127.0.0.1",
    N8N_RUNNERS_BROKER_PORT: String(port + 1),
    N8N_DIAGNOSTICS_POSTHOG_API_HOST: "http://127.0.0.1:9",
    N8N_LOG_LEVEL: "info",
    NODE_ENV: "production",
  };
}

/** The REST API's answer; fails with its body when it is not 2xx. */
async function rest(url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, { ...init, redirect: "manual", headers: { "content-type": "application/json", ...init.headers } });
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return response;
}

function authCookieOf(response: Response): string {
  const header = response.headers.getSetCookie().find((cookie) => cookie.startsWith(`${authCookie}=`));
  const value = header?.split(";")[0]?.slice(authCookie.length + 1);
  if (!value) throw new Error(`${response.url} set no ${authCookie} cookie`);
  return value;
}

/**
 * n8n 2.35.7 (npm), a workflow automation tool: an owner set up through its REST API, with its
 * built-in two-factor authentication (TOTP) enabled. The Vue editor draws the sign-in form (email
 * and password), then a code form; the session is a JWT cookie bound to an id the editor keeps in
 * `localStorage` and sends as a header.
 */
export function n8n(): CorpusApp {
  let server: ChildProcess | undefined;
  let url = "";
  let port = 0;
  let totpSecret = "";
  /**
   * The runner's own session for its calls, renewed from each answer that sets a new one: its login
   * endpoint allows 5 logins a minute per user, which a cycle's own logins nearly spend.
   */
  let adminSession: Session;

  async function launch(): Promise<void> {
    server = serve(process.execPath, [entry, "start"], { cwd: home, env: env(port), logFile: join(root, "n8n.log") });
    await waitForHttp(`${url}healthz/readiness`, (response) => response.status === 200, server, 300);
  }

  /** The session a browser holds after a login with `browserId`. */
  function sessionOf(cookie: string, browserId: string): Session {
    return {
      cookies: [{ name: authCookie, value: cookie, domain: "127.0.0.1", path: "/", expires: -1, httpOnly: true, secure: false, sameSite: "Lax" }],
      origins: [{ origin: url.replace(/\/$/, ""), localStorage: [{ name: browserIdKey, value: browserId }] }],
    };
  }

  const browserIdOf = (session: Session) =>
    session.origins.find((origin) => `${origin.origin}/` === url)?.localStorage.find((item) => item.name === browserIdKey)?.value ?? "";

  return {
    name: "n8n",
    description: `n8n ${version} (npm), a workflow automation tool: an owner with its built-in TOTP two-factor authentication, the sign-in form and then a code form drawn by a Vue app, the session a JWT cookie bound to an id in localStorage`,

    async install() {
      if (existsSync(entry) && existsSync(sqliteAddon)) return;
      rmSync(installDir, { recursive: true, force: true });
      mkdirSync(installDir, { recursive: true });
      writeFileSync(join(installDir, "package.json"), JSON.stringify({ private: true, dependencies: { n8n: version } }, null, 2));
      // Install scripts would fetch prebuilt addons and their libraries' sources (Kafka's, OpenSSL,
      // curl...) from GitHub and others; the one addon n8n needs to start on SQLite is built here.
      await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev"], { cwd: installDir });
      // npm's own node-gyp (`npm run` names it); Node's headers from Debian's nodejs package spare it a
      // download from nodejs.org, and the addon uses N-API, so any Node's headers build it.
      const nodeGyp = process.env.npm_config_node_gyp;
      if (!nodeGyp) throw new Error("npm_config_node_gyp is not set: run this through `npm run corpus`");
      await run(process.execPath, [nodeGyp, "rebuild", "--nodedir=/usr", "-j", "2"], { cwd: join(installDir, "node_modules/sqlite3") });
    },

    async start(): Promise<RunningApp> {
      rmSync(home, { recursive: true, force: true });
      mkdirSync(home, { recursive: true });
      port = await freePort();
      url = `http://127.0.0.1:${port}/`;
      await launch();
      const browserId = randomUUID();
      const owner = await rest(`${url}rest/owner/setup`, {
        method: "POST",
        headers: { "browser-id": browserId },
        body: JSON.stringify({ email: user.username, firstName: "Corpus", lastName: "User", password: user.password }),
      });
      const headers = { cookie: `${authCookie}=${authCookieOf(owner)}`, "browser-id": browserId };
      const { data } = (await (await rest(`${url}rest/mfa/qr`, { headers })).json()) as { data: { secret: string } };
      totpSecret = data.secret;
      const enabled = await rest(`${url}rest/mfa/enable`, { method: "POST", headers, body: JSON.stringify({ mfaCode: totpCode(totpSecret) }) });
      adminSession = sessionOf(authCookieOf(enabled), browserId);
      return { url, loginUrl: `${url}signin`, ...user, totpSecret, wrongPassword: /Wrong username or password/i };
    },

    async signIn() {
      const browserId = randomUUID();
      const response = await rest(`${url}rest/login`, {
        method: "POST",
        headers: { "browser-id": browserId },
        body: JSON.stringify({ emailOrLdapLoginId: user.username, password: user.password, mfaCode: totpCode(totpSecret) }),
      });
      return sessionOf(authCookieOf(response), browserId);
    },

    // The JWT's header and claims kept, its signature made up: what n8n must refuse.
    forge(session) {
      return {
        ...session,
        cookies: session.cookies.map((cookie) => {
          if (cookie.name !== authCookie) return cookie;
          const [header, claims, signature = ""] = cookie.value.split(".");
          return { ...cookie, value: `${header}.${claims}.${forgedValue(signature)}` };
        }),
      };
    },

    // A call that needs a session past its second factor, sent as the editor sends it.
    async signedIn(session) {
      const response = await fetch(`${url}rest/workflows`, { headers: { cookie: cookieHeader(session, url), "browser-id": browserIdOf(session) }, redirect: "manual" });
      if (response.status === 200) return true;
      if (response.status === 401) return false;
      throw new Error(`n8n answered ${response.status} to /rest/workflows`);
    },

    // Every session's JWT carries a hash of the user's password hash: a password set again (to the
    // same one, hashed with a new salt) ends them all on the server.
    async logoutEverywhere() {
      const before = adminSession;
      const changed = await rest(`${url}rest/me/password`, {
        method: "PATCH",
        headers: { cookie: cookieHeader(before, url), "browser-id": browserIdOf(before) },
        body: JSON.stringify({ currentPassword: user.password, newPassword: user.password, mfaCode: totpCode(totpSecret) }),
      });
      adminSession = sessionOf(authCookieOf(changed), browserIdOf(before));
      if (await this.signedIn(before)) throw new Error("a session from before the password was set again still works");
    },

    async stop() {
      await stopProcess(server);
    },
  };
}
