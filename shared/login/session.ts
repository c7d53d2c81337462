import { Cookie, CookieJar, type SerializedCookieJar } from "tough-cookie";
import type { StorageState } from "../archive/storage-state.ts";

type PlaywrightCookie = StorageState["cookies"][number];
type SameSite = PlaywrightCookie["sameSite"];

// Test sites live on localhost and IP literals; refusing public suffixes still stops `Domain=com`.
const jarOptions = { allowSpecialUseDomain: true, rejectPublicSuffixes: true };

export function emptyJar(): CookieJar {
  return new CookieJar(undefined, jarOptions);
}

/** The jar as plain JSON, for the engine state between steps. */
export function serializeJar(jar: CookieJar): SerializedCookieJar {
  return jar.serializeSync()!;
}

export function deserializeJar(serialized: SerializedCookieJar): CookieJar {
  return CookieJar.deserializeSync(serialized);
}

const sameSiteToPlaywright: Record<string, SameSite> = { strict: "Strict", lax: "Lax", none: "None" };

/**
 * The jar in Playwright's storageState shape. A cookie without SameSite is "Lax", which is how
 * Chromium treats it; a session cookie has `expires: -1`.
 */
export function jarToStorageState(jar: CookieJar, origins: StorageState["origins"] = []): StorageState {
  const cookies = (serializeJar(jar).cookies as Array<ReturnType<Cookie["toJSON"]>>)
    .map((json) => Cookie.fromJSON(json))
    .filter((cookie): cookie is Cookie => cookie !== undefined && cookie.TTL() > 0)
    .map((cookie): PlaywrightCookie => {
      const expiry = cookie.expiryTime();
      return {
        name: cookie.key,
        value: cookie.value,
        domain: cookie.hostOnly === false ? `.${cookie.domain}` : (cookie.domain ?? ""),
        path: cookie.path ?? "/",
        expires: expiry === undefined || !Number.isFinite(expiry) ? -1 : Math.floor(expiry / 1000),
        httpOnly: cookie.httpOnly,
        secure: cookie.secure,
        sameSite: sameSiteToPlaywright[cookie.sameSite ?? ""] ?? "Lax",
      };
    });
  return { cookies, origins };
}

/** A jar holding a storageState's cookies, as a browser loading that state would send them. */
export function storageStateToJar(state: StorageState): CookieJar {
  const now = new Date().toISOString();
  const cookies = state.cookies.map((cookie) => ({
    key: cookie.name,
    value: cookie.value,
    domain: cookie.domain.replace(/^\./, ""),
    hostOnly: !cookie.domain.startsWith("."),
    path: cookie.path,
    expires: cookie.expires === -1 ? "Infinity" : new Date(cookie.expires * 1000).toISOString(),
    httpOnly: cookie.httpOnly,
    secure: cookie.secure,
    sameSite: cookie.sameSite.toLowerCase(),
    creation: now,
    lastAccessed: now,
  }));
  return CookieJar.deserializeSync({ ...serializeJar(emptyJar()), cookies });
}
