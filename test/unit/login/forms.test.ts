import { describe, expect, it } from "vitest";
import { analyzeStep, type LoginStep } from "#shared/login/forms.ts";
import { parsePage } from "#shared/login/page.ts";
import { siteErrorOf, siteMessages } from "#shared/login/site-message.ts";
import type { MfaType } from "#shared/login/types.ts";

const url = "https://shop.example/signin";

function stepOf(html: string, pageUrl = url, chosenMfa: MfaType | null = null): LoginStep | null {
  return analyzeStep(parsePage(html, pageUrl), chosenMfa);
}

function mustStep(html: string, pageUrl = url, chosenMfa: MfaType | null = null): LoginStep {
  const step = stepOf(html, pageUrl, chosenMfa);
  expect(step).not.toBeNull();
  return step!;
}

describe("credential forms", () => {
  const loginPage = `<html><head><title>Sign in</title></head><body>
    <header><form role="search" action="/search"><input type="search" name="q"></form></header>
    <form id="newsletter" action="/subscribe" method="post"><input type="email" name="email" placeholder="Your email"></form>
    <form action="/session" method="post">
      <input type="hidden" name="authenticity_token" value="tok123">
      <label>Username <input name="login" type="text"></label>
      <label for="pw">Password</label><input id="pw" name="pass" type="password">
      <input name="website" type="text" style="display: none" value="">
      <label><input type="checkbox" name="remember_me" value="1"> Keep me signed in</label>
      <select name="locale"><option value="en">English</option><option value="de" selected>Deutsch</option></select>
      <button type="submit" name="commit" value="signin">Sign in</button>
    </form></body></html>`;

  it("never asks a honeypot field kept from people by aria-hidden, the way Mailchimp's signup forms hide theirs", () => {
    const { prompt } = mustStep(`<html><head><title>Sign in</title></head><body><form action="/session" method="post">
      <label for="user">Username</label><input id="user" name="login" type="text">
      <label for="pw">Password</label><input id="pw" name="pass" type="password">
      <div aria-hidden="true" style="position: absolute; left: -5000px"><label for="b_trap">Company</label><input id="b_trap" name="b_trap" type="text" tabindex="-1" value=""></div>
      <button type="submit">Sign in</button></form></body></html>`);
    expect(prompt.fields.map((field) => field.id)).toEqual(["identifier", "password"]);
  });

  it("picks the login form over search and newsletter forms, with wrapping and for= labels", () => {
    const { prompt, plan } = mustStep(loginPage);
    expect(prompt.fields).toEqual([
      { id: "identifier", ref: "identifier", type: "identifier", label: "Username", observed_selector: 'input[name="login"]', required: true },
      { id: "password", ref: "password", type: "password", label: "Password", observed_selector: "#pw", required: true },
    ]);
    expect(prompt.discovered_fields.map((field) => [field.name, field.type])).toEqual([
      ["login", "text"],
      ["pass", "password"],
    ]);
    expect(plan.forms[plan.fieldForm!]).toEqual({
      action: "https://shop.example/session",
      method: "POST",
      entries: [
        { name: "authenticity_token", value: "tok123" },
        { name: "login", field: "identifier" },
        { name: "pass", field: "password" },
        { name: "website", value: "" },
        { name: "remember_me", value: "1" },
        { name: "locale", value: "de" },
      ],
      submitter: ["commit", "signin"],
    });
  });

  it("prefers the sign-in form to a sign-up form on the same page", () => {
    const { plan } = mustStep(`<form action="/register" method="post">
        <input type="email" name="email" autocomplete="email"><input type="password" name="password" autocomplete="new-password">
        <input type="password" name="password_confirm" autocomplete="new-password"></form>
      <form action="/login" method="post"><input type="email" name="email" autocomplete="username">
        <input type="password" name="password" autocomplete="current-password"></form>`);
    expect(plan.forms[plan.fieldForm!]!.action).toBe("https://shop.example/login");
  });

  it("keeps a site's extra text field as a text field with its own id and ref", () => {
    const { prompt } = mustStep(`<form method="post"><label for="c">Company ID</label><input id="c" name="company-id">
      <label for="u">Email</label><input id="u" type="email" name="user[email]"><input type="password" name="user[password]"></form>`);
    expect(prompt.fields.map((field) => [field.id, field.ref, field.type, field.required])).toEqual([
      ["field_company_id", "company_id", "text", false],
      ["identifier", "identifier", "identifier", true],
      ["password", "password", "password", true],
    ]);
  });

  it("an identifier-only form is a step on a sign-in page, and not on another page", () => {
    const form = `<form method="post" action="/lookup"><label for="e">Email</label><input id="e" name="identifier" autocomplete="username"><button>Next</button></form>`;
    expect(mustStep(form).prompt.fields.map((field) => field.id)).toEqual(["identifier"]);
    expect(stepOf(`<p>Our newsletter</p>${form.replace("/lookup", "/newsletter")}`, "https://shop.example/blog")).toBeNull();
  });

  it("a signed-in page with a sign-out link and a profile form is no login step", () => {
    expect(stepOf(`<a href="/logout">Sign out</a><form method="post" action="/profile"><input name="display_name"></form>`, "https://shop.example/account")).toBeNull();
  });

  it("a page without forms or links to act on is no login step", () => {
    expect(stepOf(`<h1>Welcome</h1><p>Nothing to see.</p>`)).toBeNull();
  });
});

describe("one-time codes", () => {
  it.each([
    ["Enter the code from your authenticator app", "totp_code", "totp", "totp"],
    ["We texted a code to your phone ending in 42. Check your SMS.", "code", "code", "sms"],
    ["We sent a code to j***@example.com", "code", "code", "email"],
  ])("%j -> %s", (instruction, canonical, discovered, channel) => {
    const { prompt } = mustStep(`<h1>Verify</h1><p>${instruction}</p>
      <form method="post" action="/verify"><input type="hidden" name="csrf" value="x"><input name="otp" inputmode="numeric" maxlength="6" autocomplete="one-time-code"></form>`);
    expect(prompt.fields).toEqual([expect.objectContaining({ id: canonical, type: canonical })]);
    expect(prompt.discovered_fields[0]).toMatchObject({ type: discovered, linked_mfa_type: channel, hint: instruction });
  });

  it("a code box that names no channel takes the method chosen on the step before", () => {
    const { prompt } = mustStep(`<form method="post" action="/mfa"><label for="c">Security code</label><input id="c" name="c"></form>`, url, "email");
    expect(prompt.discovered_fields[0]).toMatchObject({ type: "code", linked_mfa_type: "email" });
  });
});

describe("pickers", () => {
  it("MFA method buttons become mfa_options and mfa_method choices", () => {
    const { prompt, plan } = mustStep(`<h1>Choose a verification method</h1>
      <form method="post" action="/mfa/select"><input type="hidden" name="t" value="1">
        <button name="factor" value="push">Send a push notification</button>
        <button name="factor" value="sms">Text me at (***) ***-0042</button>
        <button name="factor" value="app">Use an authenticator app</button>
        <button name="factor" value="call">Call me</button>
      </form>`);
    expect(prompt.mfa_options).toEqual([
      { label: "Send a push notification", type: "push", description: null, target: null },
      { label: "Text me at (***) ***-0042", type: "sms", description: null, target: "(***) ***-0042" },
      { label: "Use an authenticator app", type: "totp", description: null, target: null },
      { label: "Call me", type: "call", description: null, target: null },
    ]);
    expect(prompt.choices.map((choice) => choice.id)).toEqual(["push", "sms", "totp", "call"]);
    expect(plan.choices.find((choice) => choice.id === "totp")).toMatchObject({ form: 0, pairs: [["factor", "app"]] });
  });

  it("one form per account becomes account choices and sign_in_options", () => {
    const account = (id: string, name: string, email: string) =>
      `<form method="post" action="/choose"><input type="hidden" name="account_id" value="${id}"><button type="submit">${name}<br><small>${email}</small></button></form>`;
    const { prompt, plan } = mustStep(`<h1>Choose an account</h1>${account("a1", "Work", "ada@work.example")}${account("a2", "Home", "ada@home.example")}
      <form method="post" action="/logout"><button>Sign out</button></form>`);
    expect(prompt.sign_in_options).toEqual([
      { id: "account_a1", label: "Work", description: "ada@work.example" },
      { id: "account_a2", label: "Home", description: "ada@home.example" },
    ]);
    expect(prompt.choices.every((choice) => choice.type === "account")).toBe(true);
    expect(plan.forms[plan.choices[1]!.form!]!.entries).toEqual([{ name: "account_id", value: "a2" }]);
  });

  it("account links on a chooser page become account choices", () => {
    const { prompt, plan } = mustStep(`<nav><a href="/help">Help</a></nav><h1>Select an account</h1>
      <ul><li><a href="/switch?org=1">Acme</a></li><li><a href="/switch?org=2">Globex</a></li></ul><a href="/logout">Use another account</a>`);
    expect(prompt.sign_in_options.map((option) => option.label)).toEqual(["Acme", "Globex"]);
    expect(plan.choices[0]).toMatchObject({ url: "https://shop.example/switch?org=1" });
  });
});

describe("SSO buttons", () => {
  it("finds 'Sign in with X' links and buttons, buttons only script acts on, and links to known identity providers, with XPath selectors", () => {
    const { prompt, plan } = mustStep(`<main><form method="post" action="/login"><input type="email" name="email"><input type="password" name="password"></form>
      <a href="https://accounts.google.com/o/oauth2/auth?client_id=x">Google</a>
      <form method="post" action="/auth/okta"><button type="submit">Continue with Okta</button></form>
      <button type="button" onclick="go()">Sign in with Apple</button></main>`);
    expect(prompt.pending_sso_buttons).toEqual([
      { label: "Google", provider: "google", selector: '//a[normalize-space()="Google"]' },
      { label: "Continue with Okta", provider: "okta", selector: '//button[normalize-space()="Continue with Okta"]' },
      { label: "Sign in with Apple", provider: "apple", selector: '//button[normalize-space()="Sign in with Apple"]' },
    ]);
    expect(plan.choices.find((choice) => choice.provider === "okta")).toMatchObject({ type: "sso_provider", pairs: [] });
    expect(plan.choices.find((choice) => choice.provider === "apple")).not.toHaveProperty("form");
  });

  it("takes a link to a known provider's sign-in for a choice, and not one to its other pages (a changelog, a project)", () => {
    const { prompt } = mustStep(`<form method="post" action="/login"><input type="password" name="password"></form>
      <footer><a href="https://github.com/acme/app/releases">Changelog</a> <a href="https://github.com/acme">GitHub</a>
      <a href="https://www.linkedin.com/company/acme">Follow us</a>
      <a href="https://github.com/login/oauth/authorize?client_id=x" aria-label="GitHub"><svg></svg></a></footer>`);
    expect(prompt.pending_sso_buttons.map((button) => button.provider)).toEqual(["github"]);
    expect(prompt.pending_sso_buttons[0]!.selector).not.toMatch(/Changelog|GitHub"/);
  });
});

describe("page signals", () => {
  it.each([
    ['<div class="g-recaptcha" data-sitekey="k"></div>'],
    ['<div class="h-captcha"></div>'],
    ['<div class="cf-turnstile"></div>'],
    ['<script src="https://www.google.com/recaptcha/api.js"></script>'],
    ["<p>Please verify you are human</p>"],
  ])("%s is a captcha", (marker) => {
    expect(parsePage(`<form><input type="password" name="p"></form>${marker}`, url).captcha).toBe(true);
  });

  it.each([
    ['<div role="alert">Wrong password. Try again.</div>', "Wrong password. Try again."],
    ['<p class="error">That account does not exist</p>', "That account does not exist"],
    ['<div class="alert-danger" hidden>Template</div><span class="invalid-feedback">Invalid code</span>', "Invalid code"],
    ["<p>The password you entered is incorrect.</p>", "The password you entered is incorrect."],
  ])("%s shows the error %j", (markup, expected) => {
    expect(siteErrorOf(siteMessages(parsePage(`<form method="post">${markup}<input type="password" name="p"></form>`, url), []))).toBe(expected);
  });

  it("captures literal localStorage writes from inline scripts only", () => {
    const page = parsePage(
      `<script>localStorage.setItem("theme", "dark"); window.localStorage.setItem('token', 'a\\'b');</script><script src="/app.js">localStorage.setItem("x","y")</script>`,
      url,
    );
    expect(page.localStorage).toEqual([
      { name: "theme", value: "dark" },
      { name: "token", value: "a'b" },
    ]);
  });

  it("a page that asks the person to approve elsewhere is an external step", () => {
    const step = mustStep(`<h1>Verify it's you</h1><p>We sent a notification to your phone. Approve the sign-in request to continue.</p>`, "https://shop.example/login/push");
    expect(step.plan.kind).toBe("external");
    expect(step.prompt.external_action_message).toBe("We sent a notification to your phone. Approve the sign-in request to continue.");
  });
});
