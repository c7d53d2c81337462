import { describe, expect, it } from "vitest";
import { canReauthReason, secretsAsked, totpCodeFields, unnamedCodeValues } from "#shared/domain/reauth.ts";
import { analyzeStep } from "#shared/login/forms.ts";
import { recordFields } from "#shared/login/kernel.ts";
import { parsePage } from "#shared/login/page.ts";
import type { LoginRequirement } from "#shared/login/types.ts";
import { generateTotpSecret, totpCode } from "#shared/secrets/totp.ts";

/** The one code box of a verification page: its canonical type and the channel the page names for it. */
function codeBoxOf(main: string) {
  const step = analyzeStep(parsePage(`<html><head><title>Verify</title></head><body><main>${main}</main></body></html>`, "https://app.example/verify"), null);
  expect(step).not.toBeNull();
  const field = step!.prompt.fields[0]!;
  return { step: step!, type: field.type, channel: step!.prompt.discovered_fields[0]!.linked_mfa_type };
}

const form = (inner: string) => `<form method="post" action="/verify">${inner}<button type="submit">Verify</button></form>`;

describe("a code box the page calls an authenticator's without naming the app", () => {
  it.each([
    ["a One-Time Password box with autocomplete=one-time-code", form(`<label for="t">One-Time Password</label><input id="t" name="token" autocomplete="one-time-code">`)],
    ["a password box labelled One-Time Password", form(`<label for="t">One-Time Password</label><input type="password" id="t" name="secret_value">`)],
    ["Please enter your two-factor authentication code", `<p>Please enter your two-factor authentication code</p>${form(`<label for="c">Code</label><input id="c" name="code">`)}`],
    ["the verification code from your app", form(`<label for="c">Enter the verification code from your app</label><input id="c" name="c">`)],
    ["a 2FA code", `<h1>2FA</h1>${form(`<label for="c">Code</label><input id="c" name="c">`)}`],
    ["German: Zwei-Faktor-Authentifizierung", `<p>Geben Sie den Code der Zwei-Faktor-Authentifizierung ein.</p>${form(`<label for="c">Bestätigungscode</label><input id="c" name="c">`)}`],
    ["German: Einmalpasswort", form(`<label for="c">Einmalpasswort</label><input id="c" name="c">`)],
    ["French: mot de passe à usage unique", `<p>Saisissez votre mot de passe à usage unique.</p>${form(`<label for="c">Code</label><input id="c" name="c">`)}`],
    ["French: application d'authentification", form(`<label for="c">Code de votre application d'authentification</label><input id="c" name="c">`)],
    ["Spanish: autenticación de dos factores", `<p>Autenticación de dos factores</p>${form(`<label for="c">Código</label><input id="c" name="c">`)}`],
    ["Spanish: contraseña de un solo uso", form(`<label for="c">Contraseña de un solo uso</label><input id="c" name="c">`)],
  ])("%s: a TOTP code", (_, main) => {
    expect(codeBoxOf(main)).toMatchObject({ type: "totp_code", channel: "totp" });
  });

  it.each([
    ["sms", `<p>We sent a one-time password to your phone by SMS.</p>${form(`<label for="t">One-Time Password</label><input id="t" name="token" autocomplete="one-time-code">`)}`],
    ["sms", `<p>Wir haben Ihnen einen Einmalcode per Textnachricht geschickt.</p>${form(`<label for="c">Code</label><input id="c" name="c">`)}`],
    ["email", `<p>Nous vous avons envoyé un code à usage unique par courriel.</p>${form(`<label for="c">Code</label><input id="c" name="c">`)}`],
    ["email", `<p>Te enviamos el código de verificación en dos pasos por correo electrónico.</p>${form(`<label for="c">Código</label><input id="c" name="c">`)}`],
  ])("words that name another channel (%s) win over the authenticator's", (channel, main) => {
    expect(codeBoxOf(main)).toMatchObject({ type: "code", channel });
  });

  it("a box marked only autocomplete=one-time-code names no channel: an SMS code is marked so as often", () => {
    expect(codeBoxOf(form(`<label for="c">Verification code</label><input id="c" name="c" autocomplete="one-time-code">`))).toMatchObject({ type: "code", channel: null });
  });
});

describe("a code box that names no channel", () => {
  const secret = generateTotpSecret();
  const { step } = codeBoxOf(`<p>Enter the verification code to continue.</p>${form(`<label for="c">Verification code</label><input id="c" name="verification">`)}`);
  const codeId = step.prompt.fields[0]!.id;

  it("holds a TOTP code when the person's value is the current code of the linked credential's secret, else not", () => {
    const codes = unnamedCodeValues(step.prompt, { field_values: { [codeId]: totpCode(secret) } });
    expect(codes).toEqual({ [codeId]: totpCode(secret) });
    expect(totpCodeFields(codes, secret)).toEqual([codeId]);
    const wrong = String((Number(totpCode(secret)) + 1) % 1_000_000).padStart(6, "0");
    expect(totpCodeFields({ [codeId]: wrong }, secret)).toEqual([]);
    expect(totpCodeFields(codes, generateTotpSecret())).toEqual([]);
  });

  it("is recorded as the authenticator's when its value was the secret's, so a credential with the secret can re-auth; otherwise it needs a person", () => {
    const record = (totpFields: string[]) => {
      const state = { step: step.plan, durableValues: {}, typedHosts: {}, requirements: ["identifier", "password"] as LoginRequirement[], chosenMfa: null };
      recordFields(state, { [codeId]: "123456" }, [], "app.example", totpFields);
      return state.requirements;
    };
    expect(record([codeId])).toEqual(["identifier", "password", "totp_code"]);
    expect(canReauthReason(record([codeId]), true, true)).toBe("requirements_satisfiable");
    expect(canReauthReason(record([codeId]), true, false)).toBe("requires_totp_without_secret");
    expect(canReauthReason(record([]), true, true)).toBe("requires_external_action");
  });

  it("is a secret a re-auth sends once, as the TOTP code", () => {
    expect(secretsAsked(step.prompt)).toEqual(["totp_code"]);
  });
});
