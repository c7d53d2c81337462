import { describe, expect, it } from "vitest";
import { answerPrompt, canReauthReason, reauthPossible } from "#shared/domain/reauth.ts";
import { submissionProblem } from "#shared/login/submission.ts";
import type { FlowPrompt, MfaType } from "#shared/login/types.ts";

const empty: FlowPrompt = { discovered_fields: [], fields: [], choices: [], mfa_options: [], sign_in_options: [], pending_sso_buttons: [], external_action_message: null };

const passwordPrompt: FlowPrompt = {
  ...empty,
  discovered_fields: [
    { name: "email", label: "Email", selector: "#email", type: "email", required: true, linked_mfa_type: null },
    { name: "password", label: "Password", selector: "#password", type: "password", required: true, linked_mfa_type: null },
    { name: "company", label: "Company", selector: "#company", type: "text", required: false, linked_mfa_type: null },
  ],
  fields: [
    { id: "identifier", ref: "identifier", type: "identifier", label: "Email", observed_selector: "#email", required: true },
    { id: "password", ref: "password", type: "password", label: "Password", observed_selector: "#password", required: true },
    { id: "field_company", ref: "company", type: "text", label: "Company", observed_selector: "#company", required: false },
  ],
};

function codePrompt(type: "code" | "totp_code", channel: MfaType | null): FlowPrompt {
  return {
    ...empty,
    discovered_fields: [{ name: "otp", label: "Code", selector: "#otp", type: type === "code" ? "code" : "totp", required: true, linked_mfa_type: channel }],
    fields: [{ id: type, ref: type, type, label: "Code", observed_selector: "#otp", required: true }],
  };
}

function mfaPicker(...types: MfaType[]): FlowPrompt {
  return {
    ...empty,
    choices: types.map((type) => ({ id: type, label: type, type: "mfa_method", description: null, observed_selector: `//input[@value="${type}"]` })),
    mfa_options: types.map((type) => ({ label: type, type, description: null, target: null })),
  };
}

const accountPicker: FlowPrompt = {
  ...empty,
  choices: [
    { id: "account_acme", label: "Acme Corp", type: "account", description: "ada@acme.example", observed_selector: null },
    { id: "account_personal", label: "Personal", type: "account", description: "ada@example.com", observed_selector: null },
  ],
  sign_in_options: [
    { id: "account_acme", label: "Acme Corp", description: "ada@acme.example" },
    { id: "account_personal", label: "Personal", description: "ada@example.com" },
  ],
};

const values = { identifier: "ada@example.com", password: "correct horse", company: "acme" };

describe("answerPrompt", () => {
  it("fills identifier, password and text fields from the credential's values", () => {
    expect(answerPrompt(passwordPrompt, { values, totpCode: null })).toEqual({
      submission: { field_values: { identifier: "ada@example.com", password: "correct horse", field_company: "acme" } },
    });
  });

  it("leaves an optional field it has no value for, and is blocked on a required one", () => {
    expect(answerPrompt(passwordPrompt, { values: { identifier: "a", password: "b" }, totpCode: null })).toEqual({
      submission: { field_values: { identifier: "a", password: "b" } },
    });
    expect(answerPrompt(passwordPrompt, { values: { identifier: "a" }, totpCode: null })).toEqual({ blocked: "no_credential" });
  });

  it("answers a TOTP box from the secret, and is blocked without one", () => {
    expect(answerPrompt(codePrompt("totp_code", "totp"), { values, totpCode: () => "123456" })).toEqual({ submission: { field_values: { totp_code: "123456" } } });
    expect(answerPrompt(codePrompt("totp_code", "totp"), { values, totpCode: null })).toEqual({ blocked: "requires_totp_without_secret" });
  });

  it.each([
    ["sms", "requires_sms_code"],
    ["call", "requires_sms_code"],
    ["email", "requires_email_code"],
    ["push", "requires_external_action"],
  ] as const)("refuses a %s code: %s", (channel, blocked) => {
    expect(answerPrompt(codePrompt("code", channel), { values, totpCode: () => "123456" })).toEqual({ blocked });
  });

  it("answers a code box that names no channel from the TOTP secret, and names the box; without a secret it needs a person", () => {
    expect(answerPrompt(codePrompt("code", null), { values, totpCode: () => "123456" })).toEqual({
      submission: { field_values: { code: "123456" } },
      totpCodeFields: ["code"],
    });
    expect(answerPrompt(codePrompt("code", null), { values, totpCode: null })).toEqual({ blocked: "requires_external_action" });
  });

  it("picks the authenticator app on an MFA picker when there is a secret, else names what blocks it", () => {
    expect(answerPrompt(mfaPicker("sms", "totp", "email"), { values, totpCode: () => "1" })).toEqual({ submission: { mfa_option_id: "totp" } });
    expect(answerPrompt(mfaPicker("sms", "totp", "email"), { values, totpCode: null })).toEqual({ blocked: "requires_totp_without_secret" });
    expect(answerPrompt(mfaPicker("sms", "email"), { values, totpCode: () => "1" })).toEqual({ blocked: "requires_sms_code" });
    expect(answerPrompt(mfaPicker("email"), { values, totpCode: () => "1" })).toEqual({ blocked: "requires_email_code" });
    expect(answerPrompt(mfaPicker("push"), { values, totpCode: () => "1" })).toEqual({ blocked: "requires_external_action" });
  });

  it("picks the account matching a stored account or identifier, else the first", () => {
    expect(answerPrompt(accountPicker, { values: { ...values, account: "Personal" }, totpCode: null })).toEqual({ submission: { sign_in_option_id: "account_personal" } });
    expect(answerPrompt(accountPicker, { values: { identifier: "ada@acme.example" }, totpCode: null })).toEqual({ submission: { sign_in_option_id: "account_acme" } });
    expect(answerPrompt(accountPicker, { values: { identifier: "someone@else.example" }, totpCode: null })).toEqual({ submission: { sign_in_option_id: "account_acme" } });
  });

  it("follows the credential's SSO provider when the page offers it", () => {
    const prompt: FlowPrompt = { ...passwordPrompt, pending_sso_buttons: [{ label: "Sign in with Okta", provider: "okta", selector: "//a" }] };
    expect(answerPrompt(prompt, { values, totpCode: null, ssoProvider: "Okta" })).toEqual({ submission: { sso_provider: "okta" } });
    expect(answerPrompt({ ...empty, pending_sso_buttons: prompt.pending_sso_buttons }, { values, totpCode: null })).toEqual({ blocked: "no_credential" });
  });

  it("is blocked on a page that waits for the person to act elsewhere", () => {
    expect(answerPrompt({ ...empty, external_action_message: "Approve the sign-in on your phone." }, { values, totpCode: null })).toEqual({
      blocked: "requires_external_action",
    });
  });
});

describe("canReauthReason", () => {
  it.each([
    [null, true, true, false, "no_prior_successful_login"],
    [["identifier", "password"], false, false, false, "no_credential"],
    [["identifier", "password"], true, false, false, "has_credential"],
    [["identifier", "password"], false, false, true, "external_credential"],
    [["identifier", "password", "totp_code"], true, true, false, "requirements_satisfiable"],
    [["identifier", "password", "choice"], true, false, false, "requirements_satisfiable"],
    [["identifier", "password", "totp_code"], true, false, false, "requires_totp_without_secret"],
    [["identifier", "password", "sms_code"], true, true, false, "requires_sms_code"],
    [["identifier", "password", "email_code"], true, true, false, "requires_email_code"],
    [["identifier", "push"], true, true, false, "requires_external_action"],
    [["identifier", "external"], true, true, true, "requires_external_action"],
  ] as const)("%j, credential %s, secret %s, external %s -> %s", (requirements, hasCredential, hasSecret, external, reason) => {
    const result = canReauthReason(requirements === null ? null : [...requirements], hasCredential, hasSecret, external);
    expect(result).toBe(reason);
    expect(reauthPossible(result)).toBe(["has_credential", "external_credential", "requirements_satisfiable"].includes(reason));
  });
});

describe("submissionProblem", () => {
  it("accepts values by field id, input name or credential ref", () => {
    expect(submissionProblem(passwordPrompt, { field_values: { identifier: "a", password: "b" } })).toBeNull();
    expect(submissionProblem(passwordPrompt, { fields: { email: "a", password: "b", company: "c" } })).toBeNull();
  });

  it.each([
    [{ field_values: { identifier: "a" } }, "missing a value for field 'password' (Password)"],
    [{ fields: { pin: "1" } }, "unknown field 'pin'; this step's fields are: identifier, password, field_company"],
    [{}, "the submission answers nothing; this step asks for fields identifier, password, field_company"],
    [{ fields: {}, selected_choice_id: "nope" }, "unknown selected_choice_id 'nope'; the choices are: none"],
  ])("%j -> %s", (submission, problem) => {
    expect(submissionProblem(passwordPrompt, submission)).toBe(problem);
  });

  it("reads an MFA choice by method, and an empty fields object beside it as absent", () => {
    expect(submissionProblem(mfaPicker("sms", "totp"), { mfa_option_id: "totp", fields: {} })).toBeNull();
    expect(submissionProblem(mfaPicker("sms", "totp"), { mfa_option_id: "email" })).toBe("unknown mfa_option_id 'email'; the methods offered are: sms, totp");
  });
});
