import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cookieHeader } from "../../test/support/login-flows.ts";
import { appsDir, forgedValue, freePort, run, serve, stopProcess, waitForHttp, type CorpusApp, type RunningApp, type Session } from "./app.ts";

/** Debian 12's package, unpacked rather than installed: nothing outside `corpus/.apps` changes. */
const debianVersion = "1.19.2~ds1-1+b4";
const root = join(appsDir, "syncthing");
const unpacked = join(root, debianVersion);
const binary = join(unpacked, "usr/bin/syncthing");
const home = join(root, "home");
const user = { username: "corpus", password: "corpus-syncthing-password" };

/**
 * Every option that would reach past this machine, off before the first start: discovery, relays,
 * NAT traversal and STUN, usage and crash reports, upgrades; the sync protocol listens on loopback.
 */
function loopbackOnly(config: string, listenPort: number): string {
  const options: Record<string, string> = {
    listenAddress: `tcp://127.0.0.1:${listenPort}`,
    globalAnnounceEnabled: "false",
    localAnnounceEnabled: "false",
    relaysEnabled: "false",
    natEnabled: "false",
    stunKeepaliveStartS: "0",
    urAccepted: "-1",
    autoUpgradeIntervalH: "0",
    crashReportingEnabled: "false",
    startBrowser: "false",
    announceLANAddresses: "false",
  };
  let changed = config;
  for (const [name, value] of Object.entries(options)) {
    const element = new RegExp(`<${name}>[^<]*</${name}>`);
    if (!element.test(changed)) throw new Error(`syncthing's config.xml has no <${name}>: the pinned version changed?`);
    changed = changed.replace(element, `<${name}>${value}</${name}>`);
  }
  return changed;
}

/** The `Set-Cookie` pairs of an answer, as a browser would keep them for 127.0.0.1. */
function cookiesOf(response: Response): Session["cookies"] {
  return response.headers.getSetCookie().map((header) => {
    const [pair = ""] = header.split(";");
    const separator = pair.indexOf("=");
    return {
      name: pair.slice(0, separator),
      value: pair.slice(separator + 1),
      domain: "127.0.0.1",
      path: "/",
      expires: -1,
      httpOnly: /;\s*httponly/i.test(header),
      secure: false,
      sameSite: "Lax" as const,
    };
  });
}

/**
 * Syncthing's web GUI (Debian 12's 1.19.2): a user and password in its config.xml, asked for with
 * HTTP Basic authentication (`WWW-Authenticate: Basic`), which the GUI then keeps as a session
 * cookie. Its sessions live in the server's memory only.
 */
export function syncthing(): CorpusApp {
  let server: ChildProcess | undefined;
  let url = "";

  async function launch(): Promise<void> {
    server = serve(binary, ["serve", `--home=${home}`, "--no-browser", "--no-restart", "--no-upgrade"], {
      env: { PATH: process.env.PATH, HOME: home, STNODEFAULTFOLDER: "1", STNOUPGRADE: "1", STNORESTART: "1" },
      logFile: join(root, "syncthing.log"),
    });
    await waitForHttp(url, (response) => response.status === 401 || response.status === 200, server);
  }

  return {
    name: "syncthing",
    description: `Syncthing ${debianVersion} (Debian 12): its web GUI, user and password in config.xml, HTTP Basic authentication kept as a session cookie`,

    async install() {
      if (existsSync(binary)) return;
      mkdirSync(root, { recursive: true });
      const download = join(root, "download");
      rmSync(download, { recursive: true, force: true });
      mkdirSync(download);
      await run("apt-get", ["download", `syncthing=${debianVersion}`], { cwd: download }).catch((error: unknown) => {
        throw new Error(`apt-get download syncthing=${debianVersion} failed (has apt-get update run?): ${String(error)}`);
      });
      const [deb] = readdirSync(download).filter((name) => name.endsWith(".deb"));
      if (!deb) throw new Error("apt-get download left no .deb");
      await run("dpkg-deb", ["-x", join(download, deb), `${unpacked}.partial`]);
      rmSync(unpacked, { recursive: true, force: true });
      await run("mv", [`${unpacked}.partial`, unpacked]);
      rmSync(download, { recursive: true, force: true });
    },

    async start(): Promise<RunningApp> {
      rmSync(home, { recursive: true, force: true });
      await run(binary, ["generate", `--home=${home}`, "--no-default-folder", "--skip-port-probing", `--gui-user=${user.username}`, `--gui-password=${user.password}`], {
        env: { PATH: process.env.PATH, HOME: home },
      });
      const guiPort = await freePort();
      const configFile = join(home, "config.xml");
      const config = loopbackOnly(readFileSync(configFile, "utf8"), await freePort()).replace(
        /<gui ([^>]*)>\s*<address>[^<]*<\/address>/,
        `<gui $1>\n        <address>127.0.0.1:${guiPort}</address>`,
      );
      writeFileSync(configFile, config);
      url = `http://127.0.0.1:${guiPort}/`;
      await launch();
      // A wrong password is answered with the same challenge and the same "Not Authorized" page as no password at all.
      return { url, loginUrl: url, ...user, wrongPassword: null };
    },

    async signIn() {
      const basic = Buffer.from(`${user.username}:${user.password}`).toString("base64");
      const response = await fetch(url, { headers: { authorization: `Basic ${basic}` }, redirect: "manual" });
      if (response.status !== 200) throw new Error(`Basic authentication answered ${response.status}`);
      const cookies = cookiesOf(response).filter((cookie) => cookie.name.startsWith("sessionid-"));
      if (cookies.length === 0) throw new Error("Basic authentication set no sessionid cookie");
      return { cookies, origins: [] };
    },

    forge(session) {
      return { ...session, cookies: session.cookies.map((cookie) => ({ ...cookie, value: forgedValue(cookie.value) })) };
    },

    async signedIn(session) {
      const response = await fetch(url, { headers: { cookie: cookieHeader(session, url) }, redirect: "manual" });
      if (response.status === 200) return true;
      if (response.status === 401) return false;
      throw new Error(`the GUI answered ${response.status}`);
    },

    // The GUI keeps its sessions in memory: a restart is how they are deleted on the server.
    async logoutEverywhere() {
      await stopProcess(server);
      await launch();
    },

    async stop() {
      await stopProcess(server);
    },
  };
}
