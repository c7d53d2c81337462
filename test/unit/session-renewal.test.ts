import { describe, expect, it } from "vitest";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { renewedSession } from "#shared/domain/session-renewal.ts";

const now = new Date("2026-11-28T12:00:00Z");
const nowSeconds = now.getTime() / 1000;
const day = 24 * 60 * 60;

const cookie = (name: string, value: string, expires = -1): StorageState["cookies"][number] => ({
  name,
  value,
  domain: "app.example",
  path: "/",
  expires,
  httpOnly: true,
  secure: true,
  sameSite: "Lax",
});

const saved: StorageState = {
  cookies: [cookie("rt", "token-1"), cookie("prefs", "dark", nowSeconds + 10 * day)],
  origins: [
    { origin: "https://app.example", localStorage: [{ name: "theme", value: "dark" }], sessionStorage: [{ name: "tab", value: "t-1" }] },
    { origin: "https://login.example", localStorage: [], sessionStorage: [{ name: "msal", value: "cache" }] },
  ],
};

describe("what a check saves back", () => {
  it("is nothing when the check left the session as it was, its unread sessionStorage included", () => {
    const left: StorageState = { cookies: saved.cookies, origins: [{ origin: "https://app.example", localStorage: [{ name: "theme", value: "dark" }], sessionStorage: [{ name: "tab", value: "t-1" }] }] };

    expect(renewedSession(saved, left, now)).toBeNull();
  });

  it("is the session as the check left it once a token rotated, keeping the sessionStorage of origins it did not open", () => {
    const left: StorageState = { cookies: [cookie("rt", "token-2"), saved.cookies[1]!], origins: [{ origin: "https://app.example", localStorage: [{ name: "theme", value: "dark" }] }] };

    expect(renewedSession(saved, left, now)).toEqual({
      cookies: left.cookies,
      origins: [
        { origin: "https://app.example", localStorage: [{ name: "theme", value: "dark" }], sessionStorage: [{ name: "tab", value: "t-1" }] },
        { origin: "https://login.example", localStorage: [], sessionStorage: [{ name: "msal", value: "cache" }] },
      ],
    });
  });

  it.each([
    ["a value in localStorage", { origins: [{ ...saved.origins[0]!, localStorage: [{ name: "theme", value: "light" }] }, saved.origins[1]!] }],
    ["a cookie the site deleted", { cookies: [saved.cookies[0]!] }],
    ["a cookie the site added", { cookies: [...saved.cookies, cookie("csrf", "abc")] }],
    ["a sliding expiry moved by more than a tenth of the life it had left", { cookies: [saved.cookies[0]!, cookie("prefs", "dark", nowSeconds + 12 * day)] }],
    ["a session cookie made persistent", { cookies: [cookie("rt", "token-1", nowSeconds + day), saved.cookies[1]!] }],
  ])("counts %s as a change", (_, change) => {
    const left = { ...saved, ...change };

    expect(renewedSession(saved, left, now)).toEqual(left);
  });

  it("does not count an expiry moved by less than a tenth of the life it had left", () => {
    const left = { ...saved, cookies: [saved.cookies[0]!, cookie("prefs", "dark", nowSeconds + 10 * day + 60 * 60)] };

    expect(renewedSession(saved, left, now)).toBeNull();
  });
});
