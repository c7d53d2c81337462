import { describe, expect, it } from "vitest";
import { parsePage } from "#shared/login/page.ts";
import { siteErrorOf, siteMessages } from "#shared/login/site-message.ts";
import * as apps from "../../sites/app-login-pages.ts";

const url = "https://app.example/login";
const action = "/login";

function errorOf(html: string, secrets: string[] = []): string | null {
  return siteErrorOf(siteMessages(parsePage(html, url), secrets));
}

describe("the site's error message, where real applications put it", () => {
  it.each([
    {
      app: "WordPress (classic #login_error, no class)",
      html: apps.wordpressClassic({ action, username: "admin", message: "The password you entered for the username admin is incorrect." }),
      expected: "ERROR: The password you entered for the username admin is incorrect. Lost your password?",
    },
    {
      app: "WordPress 6 (#login_error.notice-error)",
      html: apps.wordpressModern({ action, message: "The password you entered for the username admin is incorrect." }),
      expected: "Error: The password you entered for the username admin is incorrect. Lost your password?",
    },
    {
      app: "MediaWiki (Codex .cdx-message--error)",
      html: apps.mediawikiCodex({ action, username: "Ada", message: "Incorrect username or password entered. Please try again." }),
      expected: "Incorrect username or password entered. Please try again.",
    },
    {
      app: "MediaWiki (legacy .errorbox)",
      html: apps.mediawikiLegacy({ action, message: "Incorrect username or password entered. Please try again." }),
      expected: "Incorrect username or password entered. Please try again.",
    },
    {
      app: "phpBB (.error in the fieldset)",
      html: apps.phpbb({ action, username: "ada", message: "You have specified an incorrect password. Please check your password and try again." }),
      expected:
        "You have specified an incorrect password. Please check your password and try again. If you continue to experience problems please contact the Board Administrator.",
    },
    {
      app: "Django admin (.errornote)",
      html: apps.djangoAdmin({
        action,
        message: "Please enter the correct username and password for a staff account. Note that both fields may be case-sensitive.",
      }),
      expected: "Please enter the correct username and password for a staff account. Note that both fields may be case-sensitive.",
    },
    {
      app: "Django (.errorlist under a field)",
      html: apps.djangoAdmin({ action, fieldError: "This field is required." }),
      expected: "This field is required.",
    },
    {
      app: "Rails/Devise (flash p.alert beside an empty p.notice)",
      html: apps.railsDevise({ action, message: "Invalid Email or password." }),
      expected: "Invalid Email or password.",
    },
    {
      app: "Keycloak (alert and #input-error)",
      html: apps.keycloak({ action, username: "ada", message: "Invalid username or password." }),
      expected: "Invalid username or password.",
    },
    {
      app: "GitLab (.flash-alert)",
      html: apps.gitlab({ action, message: "Invalid login or password." }),
      expected: "Invalid login or password.",
    },
    {
      app: "Nextcloud (.warning, with hidden warnings beside it)",
      html: apps.nextcloud({ action, username: "ada", message: "Wrong username or password." }),
      expected: "Wrong username or password.",
    },
    {
      app: "Bootstrap 5 (.invalid-feedback; a cookie banner and a hidden template elsewhere)",
      html: apps.bootstrapFeedback({ action, message: "The password is incorrect." }),
      expected: "The password is incorrect.",
    },
    {
      app: "Bootstrap 3 (.has-error .help-block, not the plain .help-block)",
      html: apps.bootstrap3HasError({ action, message: "Password does not match." }),
      expected: "Password does not match.",
    },
    {
      app: "an aria-live region (not the status badge in the nav)",
      html: apps.ariaLiveRegion({ action, message: "Sign-in failed: unknown user or bad password" }),
      expected: "Sign-in failed: unknown user or bad password",
    },
    {
      app: "a changed <title> when the body says nothing",
      html: apps.titleOnly({ action, message: "Login failed" }),
      expected: "Login failed",
    },
    {
      app: "a literal message an inline script writes on load",
      html: apps.inlineScriptMessage({ action, message: "Access denied" }),
      expected: "Access denied",
    },
    {
      app: "phpMyAdmin-like (a <noscript> alert first, a hidden alert, then the error)",
      html: apps.noscriptFirst({ action, message: "mysqli::real_connect(): (HY000/1045): Access denied for user 'ada'@'localhost' (using password: YES)" }),
      expected: "mysqli::real_connect(): (HY000/1045): Access denied for user 'ada'@'localhost' (using password: YES)",
    },
  ])("$app", ({ html, expected }) => {
    expect(errorOf(html)).toBe(expected);
  });

  it.each([
    ["WordPress", apps.wordpressClassic({ action })],
    ["MediaWiki", apps.mediawikiCodex({ action })],
    ["phpBB", apps.phpbb({ action })],
    ["Django admin", apps.djangoAdmin({ action })],
    ["Rails/Devise", apps.railsDevise({ action })],
    ["Keycloak", apps.keycloak({ action })],
    ["GitLab", apps.gitlab({ action })],
    ["Nextcloud", apps.nextcloud({ action })],
    ["Bootstrap 5", apps.bootstrapFeedback({ action })],
    ["Bootstrap 3", apps.bootstrap3HasError({ action })],
    ["aria-live", apps.ariaLiveRegion({ action })],
    ["title", apps.titleOnly({ action })],
    ["inline script", apps.inlineScriptMessage({ action })],
    ["phpMyAdmin-like", apps.noscriptFirst({ action })],
  ])("%s's login page before any attempt shows no error", (_, html) => {
    expect(errorOf(html)).toBeNull();
  });
});

describe("what is never the site's error", () => {
  it("<noscript> text, even styled as an alert and alone on the page", () => {
    const html = apps.noscriptFirst({ action });
    expect(errorOf(html)).toBeNull();
    expect(siteMessages(parsePage(html, url), []).map((message) => message.text).join(" ")).not.toMatch(/javascript/i);
    expect(errorOf(`<noscript><p class="error">Login failed: enable JavaScript</p></noscript><form><input type="password" name="p"></form>`)).toBeNull();
  });

  it.each([
    ['<div class="alert alert-danger" hidden>Invalid password</div>'],
    ['<div class="error" aria-hidden="true">Invalid password</div>'],
    ['<div class="error" style="display: none">Invalid password</div>'],
    ['<div class="error" style="visibility:hidden">Invalid password</div>'],
    ['<div class="alert alert-danger d-none">Invalid password</div>'],
    ['<p class="warning hidden">Invalid password</p>'],
    ['<template><div class="error">Invalid password</div></template>'],
    ['<script>var t = "<div class=\\"error\\">Invalid password</div>";</script>'],
    ['<style>.error::after { content: "Invalid password"; }</style>'],
    ['<input type="hidden" class="error" value="Invalid password">'],
    ['<header><div class="alert alert-danger">Login failed on another tab</div></header>'],
    ['<nav><span class="error">Invalid password</span></nav>'],
    ['<footer><p class="error">Invalid password</p></footer>'],
    ['<div id="cookie-consent" role="alert">Some features failed to load: accept cookies</div>'],
    ['<dialog><p class="error">Invalid password</p></dialog>'],
    ['<label>Password <span class="text-danger">*</span></label>'],
  ])("%s", (markup) => {
    expect(errorOf(`<body>${markup}<main><form method="post"><input name="u"><input type="password" name="p"></form></main></body>`)).toBeNull();
  });

  it("a message in a section's own header is not chrome", () => {
    expect(errorOf(`<main><section><header><p class="error">Invalid password</p></header><form><input type="password" name="p"></form></section></main>`)).toBe("Invalid password");
  });

  it("text holding a secret the person typed: that candidate is dropped, the next one is used", () => {
    const echoing = `<main><div class="alert alert-danger">The password "hunter2!" is incorrect</div>
      <form><input name="u"><input type="password" name="p" class="is-invalid"><div class="invalid-feedback">Check your password</div></form></main>`;
    expect(errorOf(echoing, ["hunter2!"])).toBe("Check your password");
    expect(siteMessages(parsePage(echoing, url), ["hunter2!"]).map((message) => message.text).join("\n")).not.toContain("hunter2!");
    expect(errorOf(`<form><p class="error">Code 123456 is not valid</p><input name="otp"></form>`, ["123456"])).toBeNull();
    expect(errorOf(`<title>Login failed for  s3cret  pass</title><form><input type="password" name="p"></form>`, ["s3cret pass"])).toBeNull();
    expect(errorOf(apps.inlineScriptMessage({ action, message: "Wrong password: letmein" }), ["letmein"])).toBeNull();
    expect(errorOf(`<form><div class="error">Unknown user ADA-SECRET-1</div><input type="password" name="p"></form>`, ["ada-secret-1"])).toBeNull();
  });

  it("a secret too short to tell from the site's own words does not hide its message", () => {
    const rejected = `<form><div class="error">Invalid password.</div><input type="password" name="p"></form>`;
    expect(errorOf(rejected, ["a"])).toBe("Invalid password.");
    expect(errorOf(rejected, ["in"])).toBe("Invalid password.");
    expect(errorOf(rejected, ["val"])).toBeNull();
  });

  it("a script's message only when the statement runs on load, into an element that exists, from a plain literal", () => {
    const page = (script: string) => `<form method="post"><input name="u"><input type="password" name="p"><span id="msg"></span></form><script>${script}</script>`;
    expect(errorOf(page(`document.getElementById("msg").textContent = "Login failed";`))).toBe("Login failed");
    expect(errorOf(page(`document.addEventListener('DOMContentLoaded', () => { $('#msg').text("Invalid credentials"); });`))).toBe("Invalid credentials");
    expect(errorOf(page(`(function () { document.querySelector('#msg').innerText = 'Wrong password'; })();`))).toBe("Wrong password");
    expect(errorOf(page(`alert("Login failed: wrong password");`))).toBe("Login failed: wrong password");
    // Validation handlers, conditions, computed values and missing targets say nothing about the last attempt.
    expect(errorOf(page(`function check() { document.getElementById('msg').innerHTML = 'Invalid email'; }`))).toBeNull();
    expect(errorOf(page(`form.addEventListener('submit', function (e) { alert('Login failed'); });`))).toBeNull();
    expect(errorOf(page(`if (!ok) { alert("Wrong password"); }`))).toBeNull();
    expect(errorOf(page(`document.getElementById('msg').innerHTML = 'Login failed: ' + reason;`))).toBeNull();
    expect(errorOf(page(`document.getElementById('gone').innerHTML = 'Login failed';`))).toBeNull();
    expect(errorOf(page(`// alert("Login failed")\nvar s = "} alert('Login failed') {";`))).toBeNull();
    expect(errorOf(`<form><input type="password" name="p"></form><template><script>alert("Login failed")</script></template>`)).toBeNull();
  });

  it("a rejection-sounding link or question next to the form is not a message", () => {
    expect(errorOf(`<div><form><input name="u"><input type="password" name="p"></form><p><a href="/help">Can't sign in? Login failed too often?</a></p><p>Trouble signing in?</p></div>`)).toBeNull();
  });
});

describe("ranking", () => {
  it("an error wins over a success notice on the same page; the notice alone is never an error", () => {
    const both = apps.wordpressModern({ action, notice: "You are now logged out.", message: "The password you entered for the username admin is incorrect." });
    expect(siteMessages(parsePage(both, url), [])).toEqual([
      { text: "Error: The password you entered for the username admin is incorrect. Lost your password?", error: true },
      { text: "You are now logged out.", error: false },
    ]);
    expect(errorOf(apps.wordpressModern({ action, notice: "You are now logged out." }))).toBeNull();
    expect(errorOf(apps.railsDevise({ action, notice: "Signed out successfully." }))).toBeNull();
    expect(errorOf(apps.djangoAdmin({ action, notice: "Check your email for a link to sign in." }))).toBeNull();
    expect(errorOf(`<div role="status">We sent a code to your email.</div><form><input name="code"></form>`)).toBeNull();
  });

  it("of two errors, the one nearest the login form", () => {
    const html = `<main><div class="alert alert-danger">Invalid search query</div>
      <form role="search" action="/search"><input type="search" name="q"></form>
      <section><div><div class="alert alert-danger">Invalid password</div></div><form method="post"><input name="u"><input type="password" name="p"></form></section></main>`;
    expect(errorOf(html)).toBe("Invalid password");
  });

  it.each([
    {
      shape: "a site-wide warning at the top of the page, the message beside the form",
      html: `<body><div id="browser-warning">Your browser is not supported. Some features may not work.</div>
        <div id="page"><div class="login"><h1>Sign in</h1><p class="message">Invalid credentials, please try again.</p>
        <form method="post"><input name="user"><input type="password" name="pass"><button>Sign in</button></form></div></div></body>`,
      expected: "Invalid credentials, please try again.",
    },
    {
      shape: "a maintenance warning banner, the message in the form's fieldset",
      html: `<body><div class="alert alert-warning" role="alert">Scheduled maintenance on Sunday: the service may be unavailable.</div>
        <main class="container"><div class="row"><div class="col-md-4"><div class="card"><div class="card-body">
        <form method="post"><fieldset><span class="text-muted">Login failed.</span><input name="u"><input type="password" name="p"></fieldset></form>
        </div></div></div></div></main></body>`,
      expected: "Login failed.",
    },
    {
      shape: "a flash far up the layout that speaks of the login, a warning elsewhere",
      html: `<body><div class="flash flash-error">Incorrect username or password.</div><aside><div class="warning">JavaScript is disabled in your browser.</div></aside>
        <div class="container"><div class="row"><div class="col"><div class="box"><h2>Sign in</h2><p>Welcome</p>
        <form method="post"><input name="login"><input type="password" name="password"></form></div></div></div></div></body>`,
      expected: "Incorrect username or password.",
    },
  ])("a message of the login beats a page-wide warning: $shape", ({ html, expected }) => {
    expect(errorOf(html)).toBe(expected);
  });

  it("an element marked as an error before a rejection sentence next to the form, both before the title", () => {
    expect(errorOf(`<title>Login failed</title><form><p>Login failed.</p><div class="error">Account locked</div><input type="password" name="p"></form>`)).toBe("Account locked");
    expect(errorOf(`<title>Login failed</title><div><form><input type="password" name="p"></form><p>Your login failed. <a href="/reset">Reset your password</a></p></div>`)).toBe(
      "Your login failed. Reset your password",
    );
    expect(errorOf(`<title>Login failed</title><form><font color="red">Incorrect password</font><input type="password" name="p"></form>`)).toBe("Incorrect password");
  });

  it("keeps the text short: whitespace collapsed, a dismiss button and screen-reader-only prefixes left out, long text cut", () => {
    expect(errorOf(`<div class="alert alert-danger alert-dismissible" role="alert"><span class="visually-hidden">Error:</span>\n  Wrong\n\n password  <button type="button" class="btn-close" aria-label="Close">Close</button></div><form><input type="password" name="p"></form>`)).toBe(
      "Wrong password",
    );
    const long = errorOf(`<p class="error">${"Invalid password. ".repeat(25)}</p><form><input type="password" name="p"></form>`)!;
    expect(long.length).toBeLessThanOrEqual(300);
    expect(long.endsWith("…")).toBe(true);
  });

  it("lists every message, errors first, for callers that look for a kind of message (a rate limit)", () => {
    const html = `<div class="notice">Welcome back</div><div class="alert">Too many failed attempts. Try again in 15 minutes.</div><form><input type="password" name="p"></form>`;
    expect(siteMessages(parsePage(html, url), [])).toEqual([
      { text: "Too many failed attempts. Try again in 15 minutes.", error: true },
      { text: "Welcome back", error: false },
    ]);
  });
});
