import { describe, expect, it } from "vitest";
import { storageStateSchema } from "#shared/archive/storage-state.ts";
import { emptyJar, jarToStorageState, storageStateToJar } from "#shared/login/session.ts";

describe("cookie jar <-> Playwright storageState", () => {
  function jarWithCookies() {
    const jar = emptyJar();
    jar.setCookieSync("sid=abc; Path=/app; HttpOnly; SameSite=Strict", "http://127.0.0.1:4000/app/login");
    jar.setCookieSync("pref=1; Domain=shop.example; Max-Age=3600; Secure; SameSite=None", "https://www.shop.example/");
    jar.setCookieSync("plain=2", "http://localhost:4001/x/y");
    jar.setCookieSync("gone=1; Max-Age=0", "http://localhost:4001/");
    return jar;
  }

  it("writes every live cookie in Playwright's shape", () => {
    const before = Math.floor(Date.now() / 1000);
    const state = jarToStorageState(jarWithCookies(), [{ origin: "http://127.0.0.1:4000", localStorage: [{ name: "theme", value: "dark" }] }]);

    expect(storageStateSchema.safeParse(state).success).toBe(true);
    expect(state.cookies).toEqual([
      { name: "sid", value: "abc", domain: "127.0.0.1", path: "/app", expires: -1, httpOnly: true, secure: false, sameSite: "Strict" },
      { name: "pref", value: "1", domain: ".shop.example", path: "/", expires: expect.any(Number), httpOnly: false, secure: true, sameSite: "None" },
      { name: "plain", value: "2", domain: "localhost", path: "/x", expires: -1, httpOnly: false, secure: false, sameSite: "Lax" },
    ]);
    expect(state.cookies[1]!.expires).toBeGreaterThanOrEqual(before + 3599);
    expect(state.cookies[1]!.expires).toBeLessThanOrEqual(before + 3601);
    expect(state.origins).toEqual([{ origin: "http://127.0.0.1:4000", localStorage: [{ name: "theme", value: "dark" }] }]);
  });

  it("reads a storageState back into a jar that sends the same cookies to the same URLs", () => {
    const original = jarWithCookies();
    const restored = storageStateToJar(jarToStorageState(original));
    for (const url of ["http://127.0.0.1:4000/app/account", "https://www.shop.example/cart", "https://shop.example/", "http://localhost:4001/x/z", "http://127.0.0.1:4000/other"]) {
      expect(restored.getCookieStringSync(url), url).toBe(original.getCookieStringSync(url));
    }
    expect(restored.getCookieStringSync("https://www.shop.example/")).toBe("pref=1");
    expect(restored.getCookieStringSync("http://www.shop.example/")).toBe("");
  });

  it("leaves out a cookie whose expiry has passed", () => {
    const jar = storageStateToJar({
      cookies: [{ name: "old", value: "1", domain: "127.0.0.1", path: "/", expires: 1_000_000, httpOnly: false, secure: false, sameSite: "Lax" }],
      origins: [],
    });
    expect(jar.getCookieStringSync("http://127.0.0.1/")).toBe("");
    expect(jarToStorageState(jar).cookies).toEqual([]);
  });
});
