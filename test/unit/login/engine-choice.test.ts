import { describe, expect, it } from "vitest";
import { chooseLoginEngine } from "#shared/login/engine-choice.ts";
import type { EngineState, FlowPrompt, LoginEngine, LoginTarget, StepOutcome, Submission } from "#shared/login/types.ts";

function promptAsking(...fields: Array<{ id: string; ref: string; type: FlowPrompt["fields"][number]["type"] }>): FlowPrompt {
  return { discovered_fields: [], fields, choices: [], mfa_options: [], sign_in_options: [], pending_sso_buttons: [], external_action_message: null };
}

const success: StepOutcome = {
  kind: "success",
  session: { cookies: [], origins: [] },
  postLoginUrl: "http://127.0.0.1/home",
  requirements: [],
  durableValues: {},
  typedHosts: {},
  ssoProvider: null,
  evidence: { version: 2, basis: "unverifiable", salt: "", signedIn: [], signInPlaces: [], sessionCookies: [] },
  engine: "browser",
};

/** An engine that answers from a script of outcomes and writes down every call it gets. */
function scriptedEngine(name: string, outcomes: StepOutcome[]) {
  const calls: Array<{ call: string; state?: EngineState; submission?: Submission }> = [];
  const engine: LoginEngine = {
    async start() {
      calls.push({ call: "start" });
      return outcomes.shift() as StepOutcome;
    },
    async submit(_target, state, submission) {
      calls.push({ call: "submit", state, submission });
      return outcomes.shift() as StepOutcome;
    },
    async probe() {
      calls.push({ call: "probe" });
      return { state: "logged_out", reason: name };
    },
    async release(state) {
      calls.push({ call: "release", state });
      return null;
    },
  };
  return { engine, calls };
}

const target: LoginTarget = { domain: "127.0.0.1", loginUrl: "http://127.0.0.1/login", allowedDomains: [] };
const noForm: StepOutcome = { kind: "failure", errorCode: "login_form_not_found", message: "no form", browserMayHelp: true };

describe("the choice of login engine", () => {
  it("starts with HTTP and stays there where HTTP finds the form", async () => {
    const http = scriptedEngine("http", [{ kind: "input", state: { step: 1 }, prompt: promptAsking({ id: "password", ref: "password", type: "password" }), websiteError: null }, success]);
    const browser = scriptedEngine("browser", []);
    const engine = chooseLoginEngine({ http: http.engine, browser: browser.engine });
    const first = await engine.start(target);
    expect(first.kind).toBe("input");
    await engine.submit(target, (first as { state: EngineState }).state, { field_values: { password: "pw" } });
    expect(http.calls.map((call) => call.call)).toEqual(["start", "submit"]);
    expect(http.calls[1]?.state).toEqual({ step: 1 });
    expect(browser.calls).toEqual([]);
  });

  it("moves to the browser where HTTP finds no form, and the browser's state answers the next submit", async () => {
    const http = scriptedEngine("http", [noForm]);
    const browser = scriptedEngine("browser", [{ kind: "input", state: { live: "bs_1" }, prompt: promptAsking({ id: "email", ref: "identifier", type: "identifier" }), websiteError: null, browserSessionId: "bs_1" }, success]);
    const engine = chooseLoginEngine({ http: http.engine, browser: browser.engine });
    const first = await engine.start(target);
    expect(first).toMatchObject({ kind: "input", browserSessionId: "bs_1" });
    const last = await engine.submit(target, (first as { state: EngineState }).state, { field_values: { email: "ada@example.com" } });
    expect(last.kind).toBe("success");
    expect(browser.calls.map((call) => call.call)).toEqual(["start", "submit"]);
    expect(browser.calls[1]?.state).toEqual({ live: "bs_1" });
  });

  it("passes on a failure the browser cannot help with", async () => {
    const refused: StepOutcome = { kind: "failure", errorCode: "site_unreachable", message: "down" };
    const http = scriptedEngine("http", [refused]);
    const browser = scriptedEngine("browser", []);
    expect(await chooseLoginEngine({ http: http.engine, browser: browser.engine }).start(target)).toEqual(refused);
    expect(browser.calls).toEqual([]);
  });

  it("goes straight to the browser for a connection that logged in with it, and probes with it", async () => {
    const http = scriptedEngine("http", []);
    const browser = scriptedEngine("browser", [success]);
    const engine = chooseLoginEngine({ http: http.engine, browser: browser.engine });
    await engine.start({ ...target, engine: "browser" });
    await engine.probe({ ...target, engine: "browser" }, { cookies: [], origins: [] }, "http://127.0.0.1/home", null);
    await engine.probe(target, { cookies: [], origins: [] }, "http://127.0.0.1/home", null);
    expect(browser.calls.map((call) => call.call)).toEqual(["start", "probe"]);
    expect(http.calls.map((call) => call.call)).toEqual(["probe"]);
  });

  it("answers the browser's steps with the values a submit that left no session gave, and stops where it asks for more", async () => {
    const http = scriptedEngine("http", [
      { kind: "input", state: { step: 1 }, prompt: promptAsking({ id: "user", ref: "identifier", type: "identifier" }, { id: "pass", ref: "password", type: "password" }), websiteError: null },
      { kind: "failure", errorCode: "internal_error", message: "no cookie", browserMayHelp: true },
    ]);
    const browser = scriptedEngine("browser", [
      { kind: "input", state: { live: 1 }, prompt: promptAsking({ id: "email", ref: "identifier", type: "identifier" }), websiteError: null, browserSessionId: "bs_2" },
      { kind: "input", state: { live: 2 }, prompt: promptAsking({ id: "pw", ref: "password", type: "password" }), websiteError: null, browserSessionId: "bs_2" },
      { kind: "input", state: { live: 3 }, prompt: promptAsking({ id: "otp", ref: "totp_code", type: "totp_code" }), websiteError: null, browserSessionId: "bs_2" },
    ]);
    const engine = chooseLoginEngine({ http: http.engine, browser: browser.engine });
    const first = await engine.start(target);
    const moved = await engine.submit(target, (first as { state: EngineState }).state, { field_values: { user: "ada", pass: "secret" } });
    expect(browser.calls.filter((call) => call.call === "submit").map((call) => call.submission)).toEqual([{ field_values: { email: "ada" } }, { field_values: { pw: "secret" } }]);
    expect(moved).toMatchObject({ kind: "input", browserSessionId: "bs_2", prompt: { fields: [{ ref: "totp_code" }] } });
    await engine.release((moved as { state: EngineState }).state);
    expect(browser.calls.at(-1)).toEqual({ call: "release", state: { live: 3 } });
  });

  it("goes on with the HTTP engine for a flow whose state was written before engines were chosen", async () => {
    const http = scriptedEngine("http", [success]);
    const browser = scriptedEngine("browser", []);
    await chooseLoginEngine({ http: http.engine, browser: browser.engine }).submit(target, { version: 1, jar: {} }, { field_values: { password: "pw" } });
    expect(http.calls).toEqual([{ call: "submit", state: { version: 1, jar: {} }, submission: { field_values: { password: "pw" } } }]);
  });
});

describe("a choice only a browser can press", () => {
  /** A sign-in page offering TestIdP through a button that only script acts on; its selector differs per engine. */
  function ssoPage(selector: string): FlowPrompt {
    return {
      ...promptAsking({ id: "password", ref: "password", type: "password" }),
      choices: [{ id: "sso_testidp", label: "Log in with TestIdP", type: "sso_provider", description: null, observed_selector: selector }],
      pending_sso_buttons: [{ label: "Log in with TestIdP", provider: "testidp", selector }],
    };
  }
  const pressedByScript: StepOutcome = { kind: "failure", errorCode: "unsupported_auth_method", message: "pressed through script", browserMayHelp: true };
  const providerPage: FlowPrompt = {
    ...promptAsking(),
    fields: [
      { id: "email", ref: "identifier", type: "identifier", required: true },
      { id: "pw", ref: "password", type: "password", required: true },
    ],
  };

  it.each([
    ["by the button's selector", { sso_button_selector: '//a[normalize-space()="Log in with TestIdP"]' }],
    ["by provider", { sso_provider: "TestIdP" }],
    ["by choice id", { selected_choice_id: "sso_testidp" }],
  ])("chosen %s, is pressed in the browser, which goes on to the provider's page", async (_, submission: Submission) => {
    const http = scriptedEngine("http", [{ kind: "input", state: { step: 1 }, prompt: ssoPage('//a[normalize-space()="Log in with TestIdP"]'), websiteError: null }, pressedByScript]);
    const browser = scriptedEngine("browser", [
      { kind: "input", state: { live: 1 }, prompt: ssoPage('[data-acs-ref="r0-3"]'), websiteError: null, browserSessionId: "bs_3" },
      { kind: "input", state: { live: 2 }, prompt: providerPage, websiteError: null, browserSessionId: "bs_3" },
    ]);
    const engine = chooseLoginEngine({ http: http.engine, browser: browser.engine });
    const first = await engine.start(target);

    const moved = await engine.submit(target, (first as { state: EngineState }).state, submission);

    const pressed = browser.calls.filter((call) => call.call === "submit").map((call) => call.submission);
    expect(pressed).toHaveLength(1);
    expect(pressed[0]).toEqual(submission.selected_choice_id ? { selected_choice_id: "sso_testidp" } : { sso_provider: "testidp" });
    expect(moved).toMatchObject({ kind: "input", browserSessionId: "bs_3", prompt: providerPage });
  });
});
