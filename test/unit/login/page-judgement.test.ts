import { describe, expect, it } from "vitest";
import { analyzeStep, isInterstitial } from "#shared/login/forms.ts";
import { isNextLoginStep, unprovenSession } from "#shared/login/kernel.ts";
import { parsePage } from "#shared/login/page.ts";
import { unlearntEvidence } from "#shared/login/session-evidence.ts";

const dashboardUrl = "https://app.example/dashboard";
const stepOf = (html: string, url = dashboardUrl) => analyzeStep(parsePage(html, url), null);
const lastLoginCard = `<section class="card"><h2>Last successful login</h2><p>Yesterday</p><a href="/login-history">View login history</a></section>`;

describe("search boxes are never a login's fields", () => {
  it.each([
    ["a placeholder", `<form action="/tickets" method="get"><input type="text" name="q" placeholder="Search…"><button>Go</button></form>`],
    ["an aria-label", `<form action="/tickets" method="get"><input type="text" name="q" aria-label="Suche"><button>Los</button></form>`],
    ["a name", `<form action="/tickets" method="get"><input type="text" name="searchQuery"><button>Go</button></form>`],
    ["a role=search landmark around the form", `<div role="search"><form action="/tickets" method="get"><input type="text" name="q"><button>Go</button></form></div>`],
    ["a role=search form", `<form role="search" action="/tickets" method="get"><input type="text" name="q"><button>Go</button></form>`],
  ])("a text box with %s, on a page that mentions login", (_, form) => {
    expect(stepOf(`<title>Dashboard</title><header>${form}</header><main><h1>Dashboard</h1>${lastLoginCard}</main>`)).toBeNull();
  });

  it("a search box inside a login form is left out of the fields asked", () => {
    const step = stepOf(`<title>Sign in</title><form method="post" action="/session"><input type="text" name="site_search" placeholder="Search the help">
      <label for="u">Email</label><input id="u" type="email" name="email"><label for="p">Password</label><input id="p" type="password" name="password"><button>Sign in</button></form>`, "https://app.example/signin");
    expect(step?.prompt.fields.map((field) => field.type)).toEqual(["identifier", "password"]);
  });
});

describe("what a login asks", () => {
  const filter = `<form class="widget-filter" action="/dashboard" method="get"><label for="a">Assignee</label><input id="a" name="assignee" placeholder="Username"><button>Apply</button></form>`;

  it("a signed-in page's filter asking for a username asks nothing a login asks", () => {
    const step = stepOf(`<title>Dashboard</title><main><h1>Dashboard</h1>${lastLoginCard}${filter}</main>`);
    expect(step?.asksLogin).toBe(false);
  });

  it.each([
    ["a Next button", `<form method="post" action="/lookup"><label for="e">Email</label><input id="e" name="identifier" autocomplete="username"><button>Next</button></form>`],
    ["a Weiter button", `<form method="post" action="/lookup"><label for="e">E-Mail</label><input id="e" name="email" type="email"><button>Weiter</button></form>`],
    ["a login form's action", `<form method="post" action="/login/identify"><label for="e">Email</label><input id="e" name="email" type="email"><button>Go</button></form>`],
    ["a password", `<form method="post" action="/x"><input name="user"><input name="pw" type="password"><button>Go</button></form>`],
    ["a code", `<form method="post" action="/x"><label for="c">Security code</label><input id="c" name="otp"><button>Go</button></form>`],
  ])("an identifier or a secret in a form with %s does", (_, form) => {
    expect(stepOf(`<title>Sign in</title><main>${form}</main>`, "https://app.example/signin")?.asksLogin).toBe(true);
  });

  it("a step that asks nothing a login asks is the next one only while the login form stays or no session has started", async () => {
    const answered = stepOf(`<title>Sign in</title><form method="post" action="/x"><input name="user"><input name="pw" type="password"></form>`, "https://app.example/signin")!;
    const step = stepOf(`<title>Dashboard</title><main><h1>Dashboard</h1>${lastLoginCard}${filter}</main>`)!;
    expect(await isNextLoginStep(step, answered.plan, () => true)).toBe(false);
    expect(await isNextLoginStep(step, answered.plan, () => false)).toBe(true);
    expect(await isNextLoginStep(step, step.plan, () => true)).toBe(true);
    expect(await isNextLoginStep(answered, answered.plan, () => true)).toBe(true);
  });
});

describe("pages that show no session", () => {
  const canvasCheck = `<!doctype html><title>Vault</title><canvas id="check"></canvas><script>draw()</script>`;

  it.each([
    ["a check drawn on a canvas", canvasCheck],
    ["a 'Just a moment' page", `<title>Just a moment...</title><main><h1>Checking your browser before accessing app.example</h1></main>`],
    [
      "a check linking to its checking service",
      `<title>Security check</title><main><p>One more step</p></main><footer><a href="https://checker.example/privacy">Privacy</a> <a href="https://checker.example/">Checker</a></footer>`,
    ],
  ])("%s is an interstitial, and proves no session", (_, html) => {
    const model = parsePage(html, "https://app.example/check");
    expect(isInterstitial(model)).toBe(true);
    expect(unprovenSession(model, unlearntEvidence())).toContain("/check");
  });

  it.each([
    ["a page with the app's links", `<title>Home</title><canvas></canvas><nav><a href="/a">Inbox</a><a href="/b">Drafts</a></nav>`],
    ["a short signed-in page without signs", `<title>Acme</title><main><h1>Dashboard</h1><p>Signed in</p></main>`],
    ["a page with fields", `<title>Security check</title><canvas></canvas><form><input name="note"></form>`],
  ])("%s is none", (_, html) => {
    expect(isInterstitial(parsePage(html, "https://app.example/home"))).toBe(false);
  });

  it("a canvas page with a sign-out control shows a session", () => {
    const model = parsePage(`<title>Board</title><canvas></canvas><a href="/logout">Sign out</a>`, "https://app.example/board");
    expect(unprovenSession(model, unlearntEvidence())).toBeNull();
  });
});
