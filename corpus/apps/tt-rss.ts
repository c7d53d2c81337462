import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Browser } from "playwright-core";
import { captureBrowserState } from "#shared/login/browser/browser-state.ts";
import { cookieHeader } from "../../test/support/login-flows.ts";
import { appsDir, forgedValue, freePort, run, serve, stopProcess, waitForHttp, type CorpusApp, type CorpusTools, type RunningApp, withPage } from "./app.ts";

/** Debian 12's package and the ones it links its libraries from, unpacked into one tree rather than installed. */
const debianVersion = "21~git20210204.b4cbc79+dfsg-1.2";
const packages = [
  `tt-rss=${debianVersion}`,
  "libjs-dojo-core=1.17.2+dfsg1-2.1",
  "libjs-dojo-dijit=1.17.2+dfsg1-2.1",
  "libjs-scriptaculous=1.9.0-3",
  "php-php-gettext=1.0.12-5",
  "php-psr-log=1.1.4-2",
  "phpqrcode=1.1.4-3.1",
  "fonts-material-design-icons-iconfont=6.7.0+dfsg-1",
];
/** What it runs on, installed from Debian's packages as root (and so what `.ci/run` must install). */
const runtime = "apt-get install -y php-cli php-pgsql php-intl php-mbstring php-xml postgresql";
const phpModules = ["pdo_pgsql", "intl", "mbstring", "dom", "json"];

const root = join(appsDir, "tt-rss");
const unpacked = join(root, debianVersion);
const www = join(unpacked, "usr/share/tt-rss/www");
const schema = join(unpacked, "usr/share/tt-rss/schema/ttrss_schema_pgsql.sql");
const home = join(root, "home");
const database = { data: join(home, "pg"), socket: join(home, "run"), user: "ttrss", name: "ttrss" };
/** The package links these two to /etc and /var; here they are the data directory's. */
const homeLinks = { "config.php": join(home, "config.php"), "feed-icons": join(home, "feed-icons") };
const user = { username: "corpus", password: "corpus-tt-rss-password" };
/** Both refuse to run as root: the database and the PHP server each run as Debian's own user for them. */
const databaseUser = "postgres";
const webUser = "www-data";

/** The newest PostgreSQL server installed from Debian's packages. */
function postgresBin(): string {
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").filter((version) => existsSync(`/usr/lib/postgresql/${version}/bin/pg_ctl`)) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) needsRuntime("no PostgreSQL server");
  return `/usr/lib/postgresql/${newest}/bin`;
}

function needsRuntime(why: string): never {
  throw new Error(`tt-rss needs PHP and PostgreSQL from Debian's packages (${why}): ${runtime}`);
}

/** `command` run as `name` when this runner is root; as this runner's own user otherwise. */
function asUser(name: string, command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["setpriv", [`--reuid=${name}`, `--regid=${name}`, "--init-groups", command, ...args]] : [command, args];
}

/** Hands `path` to `name`, so that the process run as `name` may write there. */
async function giveTo(name: string, path: string): Promise<void> {
  if (process.getuid?.() === 0) await run("chown", [`${name}:${name}`, path]);
}

async function psql(sql: string): Promise<void> {
  await run("psql", ["-h", database.socket, "-U", database.user, "-d", database.name, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql]);
}

/**
 * The package's config.php, its database on a socket in the data directory, with everything that
 * reaches past this machine off: no update check, no feed updates from the browser (and no update
 * daemon is run), no registration mail, the one authentication plugin and no other. A session is its
 * cookie alone, not bound to the browser's user agent: the service's profile is meant for browsers
 * other than the one that logged in.
 */
function config(url: string): string {
  const settings: Record<string, string | number | boolean> = {
    DB_TYPE: "pgsql",
    DB_HOST: database.socket,
    DB_PORT: "",
    DB_USER: database.user,
    DB_NAME: database.name,
    DB_PASS: "",
    MYSQL_CHARSET: "UTF8",
    SELF_URL_PATH: url,
    SINGLE_USER_MODE: false,
    SIMPLE_UPDATE_MODE: false,
    PHP_EXECUTABLE: "/usr/bin/php",
    LOCK_DIRECTORY: join(home, "lock"),
    CACHE_DIR: join(home, "cache"),
    ICONS_DIR: "feed-icons",
    ICONS_URL: "feed-icons",
    AUTH_AUTO_CREATE: false,
    AUTH_AUTO_LOGIN: false,
    FORCE_ARTICLE_PURGE: 0,
    ENABLE_REGISTRATION: false,
    REG_NOTIFY_ADDRESS: "corpus@localhost",
    REG_MAX_USERS: 0,
    SESSION_COOKIE_LIFETIME: 86400,
    SMTP_FROM_NAME: "Tiny Tiny RSS",
    SMTP_FROM_ADDRESS: "corpus@localhost",
    DIGEST_SUBJECT: "[tt-rss] New headlines",
    CHECK_FOR_UPDATES: false,
    ENABLE_GZIP_OUTPUT: false,
    PLUGINS: "auth_internal",
    LOG_DESTINATION: "",
    CONFIG_VERSION: 26,
    _SESSION_SKIP_UA_CHECKS: true,
  };
  const defines = Object.entries(settings).map(([name, value]) => `define(${JSON.stringify(name)}, ${JSON.stringify(value)});`);
  return `<?php\n${defines.join("\n")}\n`;
}

/** The user added as its preferences' "Create user" does (a salted MODE2 hash), with no starter feeds to fetch. */
const seedUser = `<?php
chdir($argv[1]);
set_include_path($argv[1] . "/include" . PATH_SEPARATOR . get_include_path());
require_once "autoload.php";
require_once "functions.php";
require_once "config.php";
$salt = substr(bin2hex(get_random_bytes(125)), 0, 250);
Db::pdo()->prepare("INSERT INTO ttrss_users (login, pwd_hash, access_level, created, salt) VALUES (?, ?, 0, NOW(), ?)")
  ->execute([$argv[2], encrypt_password($argv[3], $salt, true), $salt]);
`;

/**
 * Tiny Tiny RSS (Debian 12's tt-rss, a 2021 snapshot) on PostgreSQL: a login form served as HTML
 * and shown once its Dojo widgets have loaded; a wrong password comes back as an alert on the form;
 * the session is a PHP session (`ttrss_sid`) kept in its `ttrss_sessions` table.
 */
export function ttRss(): CorpusApp {
  let server: ChildProcess | undefined;
  let browser: Browser;
  let url = "";

  async function pgCtl(args: string[]): Promise<void> {
    const [command, userArgs] = asUser(databaseUser, join(postgresBin(), "pg_ctl"), ["-D", database.data, ...args]);
    await run(command, userArgs);
  }

  return {
    name: "tt-rss",
    description: `Tiny Tiny RSS ${debianVersion} (Debian 12) on PostgreSQL: a login form shown once its Dojo widgets load, a wrong password as an alert on it, the session a PHP session in its database`,

    async install() {
      const anyMissing = `foreach (${JSON.stringify(phpModules)} as $module) if (!extension_loaded($module)) exit(1);`;
      await run("php", ["-r", anyMissing]).catch(() => needsRuntime(`no php, or no PHP module among ${phpModules.join(", ")}`));
      postgresBin();
      if (existsSync(join(www, "index.php"))) return;
      mkdirSync(root, { recursive: true });
      const download = join(root, "download");
      rmSync(download, { recursive: true, force: true });
      mkdirSync(download);
      await run("apt-get", ["download", ...packages], { cwd: download }).catch((error: unknown) => {
        throw new Error(`apt-get download ${packages.join(" ")} failed (has apt-get update run?): ${String(error)}`);
      });
      const partial = `${unpacked}.partial`;
      rmSync(partial, { recursive: true, force: true });
      // One tree: the package's links into the libraries' folders are relative, and land in it.
      for (const deb of readdirSync(download).filter((name) => name.endsWith(".deb"))) await run("dpkg-deb", ["-x", join(download, deb), partial]);
      const partialWww = join(partial, "usr/share/tt-rss/www");
      for (const [name, target] of Object.entries(homeLinks)) {
        rmSync(join(partialWww, name), { force: true });
        symlinkSync(relative(www, target), join(partialWww, name));
      }
      rmSync(unpacked, { recursive: true, force: true });
      await run("mv", [partial, unpacked]);
      rmSync(download, { recursive: true, force: true });
    },

    async start(tools: CorpusTools): Promise<RunningApp> {
      browser = tools.browser;
      // A database server an interrupted run left behind holds the old data directory.
      if (existsSync(join(database.data, "postmaster.pid"))) await pgCtl(["stop", "-m", "immediate"]).catch(() => {});
      rmSync(home, { recursive: true, force: true });
      for (const dir of ["pg", "run", "lock", "feed-icons", "cache/images", "cache/upload", "cache/export", "cache/feeds"]) mkdirSync(join(home, dir), { recursive: true });
      for (const dir of [database.data, database.socket]) await giveTo(databaseUser, dir);
      for (const dir of ["lock", "feed-icons", "cache", "cache/images", "cache/upload", "cache/export", "cache/feeds"]) await giveTo(webUser, join(home, dir));

      const [initdb, initdbArgs] = asUser(databaseUser, join(postgresBin(), "initdb"), ["-D", database.data, "-U", database.user, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]);
      await run(initdb, initdbArgs);
      // No TCP at all, a socket in the data directory only; a throwaway database needs no fsync.
      await pgCtl(["start", "-w", "-l", join(database.data, "postgres.log"), "-o", `-c listen_addresses='' -c unix_socket_directories='${database.socket}' -c fsync=off`]);
      await run("psql", ["-h", database.socket, "-U", database.user, "-d", "postgres", "-c", `CREATE DATABASE ${database.name}`]);
      await run("psql", ["-h", database.socket, "-U", database.user, "-d", database.name, "-q", "-v", "ON_ERROR_STOP=1", "-f", schema]);
      // The schema's own admin account has a well-known password: none can log in with it here.
      await psql("UPDATE ttrss_users SET pwd_hash = 'SHA1:' || md5(random()::text) WHERE login = 'admin'");

      const port = await freePort();
      url = `http://127.0.0.1:${port}/`;
      writeFileSync(join(home, "config.php"), config(url));
      writeFileSync(join(home, "seed-user.php"), seedUser);
      await run("php", [join(home, "seed-user.php"), www, user.username, user.password]);

      const [php, phpArgs] = asUser(webUser, "php", ["-d", "display_errors=0", "-d", "log_errors=1", "-S", `127.0.0.1:${port}`, "-t", www]);
      server = serve(php, phpArgs, { cwd: www, env: { PATH: process.env.PATH }, logFile: join(root, "tt-rss.log") });
      await waitForHttp(url, (response) => response.status === 200, server);
      return { url, loginUrl: url, ...user, wrongPassword: /Incorrect username or password/ };
    },

    async signIn() {
      return withPage(browser, url, { cookies: [], origins: [] }, async (page) => {
        await page.fill("input[name=login]", user.username);
        await page.fill("input[name=password]", user.password);
        await page.getByRole("button", { name: "Log in" }).click();
        await page.waitForSelector("#feeds-holder", { timeout: 60_000 });
        return captureBrowserState(page.context());
      });
    },

    forge(session) {
      return { ...session, cookies: session.cookies.map((cookie) => (cookie.name === "ttrss_sid" ? { ...cookie, value: forgedValue(cookie.value) } : cookie)) };
    },

    // The page itself is the app's answer: its main layout for a session, its login form without one.
    async signedIn(session) {
      const response = await fetch(url, { headers: { cookie: cookieHeader(session, url) }, redirect: "manual" });
      const page = await response.text();
      if (response.status === 200 && page.includes('id="feeds-holder"')) return true;
      if (response.status === 200 && page.includes('name="password"')) return false;
      throw new Error(`tt-rss answered ${response.status} with neither its main layout nor its login form`);
    },

    // Its sessions are rows of ttrss_sessions, the PHP session serialized (and base64-encoded).
    async logoutEverywhere() {
      const uid = `(SELECT id FROM ttrss_users WHERE login = '${user.username}')`;
      await psql(`DELETE FROM ttrss_sessions WHERE convert_from(decode(data, 'base64'), 'UTF8') ~ ('(^|[;}])uid\\|i:' || ${uid} || ';')`);
    },

    async stop() {
      await stopProcess(server);
      if (existsSync(join(database.data, "postmaster.pid"))) await pgCtl(["stop", "-m", "fast"]);
    },
  };
}
