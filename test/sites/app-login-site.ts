import * as apps from "./app-login-pages.ts";
import { handlerClock, htmlReply, randomToken, redirectReply, serveRoutes, type Exchange, type Route } from "./site-http.ts";

/**
 * Login pages shaped like real applications' (see app-login-pages.ts), one per path prefix, each
 * answering a wrong password with that application's own message markup: for tests of the
 * `website_error` a connection shows. One user, in memory, on 127.0.0.1 only.
 */

export interface AppLoginSite {
  /** http://127.0.0.1:<port>. */
  url: string;
  user: { name: string; password: string };
  /** The login page of `app`, the URL a connection's `login_url` names. */
  loginUrl(app: AppName): string;
  stop(): Promise<void>;
}

interface App {
  loginPath: string;
  passwordField: string;
  page: (options: apps.AppPageOptions) => string;
  /** The application's wording for a wrong password; `typed` is what was sent, for the app that repeats it. */
  rejection: (typed: string) => string;
}

const appTable = {
  wordpress: {
    loginPath: "/wordpress/wp-login.php",
    passwordField: "pwd",
    page: apps.wordpressClassic,
    rejection: () => "The password you entered for the username ada is incorrect.",
  },
  phpmyadmin: {
    loginPath: "/phpmyadmin/index.php",
    passwordField: "pma_password",
    page: apps.noscriptFirst,
    rejection: () => "mysqli::real_connect(): (HY000/1045): Access denied for user 'ada'@'localhost' (using password: YES)",
  },
  router: {
    loginPath: "/router/login.cgi",
    passwordField: "pwd",
    page: apps.inlineScriptMessage,
    rejection: () => "Access denied",
  },
  // A careless application that repeats the password it was sent in its message.
  echo: {
    loginPath: "/echo/login",
    passwordField: "password",
    page: apps.bootstrapFeedback,
    rejection: (typed: string) => `The password "${typed}" is incorrect.`,
  },
} satisfies Record<string, App>;
export type AppName = keyof typeof appTable;

export async function startAppLoginSite(): Promise<AppLoginSite> {
  const user = { name: "ada", password: "correct horse battery" };
  const sessions = new Set<string>();
  const routes = new Map<string, Route>();
  for (const [name, app] of Object.entries(appTable) as Array<[AppName, App]>) {
    const cookie = `${name}_session`;
    const home = `/${name}/home`;
    routes.set(app.loginPath, {
      GET: () => htmlReply(app.page({ action: app.loginPath })),
      POST: (exchange: Exchange) => {
        const typed = exchange.form.get(app.passwordField) ?? "";
        if (typed !== user.password) return htmlReply(app.page({ action: app.loginPath, message: app.rejection(typed) }));
        const token = randomToken();
        sessions.add(token);
        exchange.setCookie(cookie, token, `/${name}`);
        return redirectReply(home);
      },
    });
    routes.set(home, {
      GET: (exchange) =>
        sessions.has(exchange.cookies.get(cookie) ?? "")
          ? htmlReply(`<!doctype html><title>Dashboard</title><h1>Dashboard</h1><p>Signed in as ${user.name}</p><a href="/${name}/logout">Log out</a>`)
          : redirectReply(app.loginPath),
    });
  }
  const server = await serveRoutes(routes, handlerClock());
  const url = `http://127.0.0.1:${server.port}`;
  return { url, user, loginUrl: (app) => `${url}${appTable[app].loginPath}`, stop: server.stop };
}
