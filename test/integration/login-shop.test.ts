import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget, StepOutcome } from "#shared/login/types.ts";
import { startShopSite, type ShopSite } from "../sites/shop-site.ts";

let shop: ShopSite;

beforeAll(async () => {
  shop = await startShopSite();
});

afterEach(() => {
  shop.dropSignedInPagesAfter(null);
});

afterAll(async () => {
  await shop?.stop();
});

const engine = createLoginEngine({ allowPrivateTargets: true });
const target = (entry = "/"): LoginTarget => ({ domain: "127.0.0.1", loginUrl: `${shop.url}${entry}`, allowedDomains: [] });

/** From `entry` (the home page: through the "Anmelden" link), then the form; each step through JSON. */
async function logIn(entry = "/"): Promise<StepOutcome> {
  const form = await engine.start(target(entry));
  if (form.kind !== "input") throw new Error(`no login form (${JSON.stringify(form)})`);
  const values = Object.fromEntries(form.prompt.fields.map((field) => [field.id, field.type === "password" ? shop.user.password : shop.user.email]));
  return JSON.parse(JSON.stringify(await engine.submit(target(), JSON.parse(JSON.stringify(form.state)) as typeof form.state, { field_values: values }))) as StepOutcome;
}

describe("a German shop whose home page offers only an 'Anmelden' link to its account page", () => {
  it("finds the login form behind the link and learns verified evidence", async () => {
    const outcome = await logIn();

    expect(outcome).toMatchObject({ kind: "success", postLoginUrl: `${shop.url}/konto/`, evidence: { basis: "verified" } });
  });

  it("a network error on the fetches that learn the evidence leaves the login a success, its evidence unverifiable, and a check learns it", async () => {
    // The landing page after the login answers; the second signed-in look at it does not.
    shop.dropSignedInPagesAfter(1);
    const outcome = await logIn("/konto/");

    expect(outcome).toMatchObject({ kind: "success", postLoginUrl: `${shop.url}/konto/`, evidence: { basis: "unverifiable", signedIn: [], sessionCookies: [] } });
    const success = outcome as Extract<StepOutcome, { kind: "success" }>;
    expect(success.session.cookies.map((cookie) => cookie.name)).toContain("sw-session");
    shop.dropSignedInPagesAfter(null);
    // The page answers again: the check learns from it what the login could not, and finds the session.
    expect(await engine.probe(target(), success.session, success.postLoginUrl, success.evidence)).toMatchObject({
      state: "logged_in",
      evidence: { basis: "verified", engine: "http" },
    });
  });
});
