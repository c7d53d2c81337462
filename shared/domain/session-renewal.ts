import type { StorageState } from "../archive/storage-state.ts";

/**
 * What a health check saves back of a session its site renewed while the check loaded it (a
 * refresh token swapped for a new one at each load, a sliding expiry): the session as the check left
 * it, or null when that holds nothing the saved one does not, so an unchanged session costs no write.
 *
 * The check's visit started from the whole saved session, so what it left is the profile's session
 * as the site now has it, cookies it deleted and all. Only the sessionStorage of origins the visit did
 * not open cannot be read back: the saved one is kept for them.
 */
export function renewedSession(saved: StorageState, left: StorageState, now: Date): StorageState | null {
  const renewed = withUnreadSessionStorage(saved, left);
  return sameSession(saved, renewed, now.getTime() / 1000) ? null : renewed;
}

type Cookie = StorageState["cookies"][number];

/** The session's fingerprint: one entry per thing it keeps, by where it is kept, with its value. */
function fingerprint(state: StorageState): Map<string, string> {
  const entries = new Map<string, string>();
  for (const cookie of state.cookies) entries.set(cookiePlace(cookie), cookie.value);
  for (const origin of state.origins) {
    for (const { name, value } of origin.localStorage) entries.set(`local\u0000${origin.origin}\u0000${name}`, value);
    for (const { name, value } of origin.sessionStorage ?? []) entries.set(`session\u0000${origin.origin}\u0000${name}`, value);
    for (const database of origin.indexedDB ?? []) entries.set(`indexeddb\u0000${origin.origin}\u0000${database.name}`, JSON.stringify(database));
  }
  return entries;
}

function cookiePlace(cookie: Cookie): string {
  return `cookie\u0000${cookie.domain}\u0000${cookie.path}\u0000${cookie.name}`;
}

function sameSession(saved: StorageState, renewed: StorageState, nowSeconds: number): boolean {
  const before = fingerprint(saved);
  const after = fingerprint(renewed);
  if (before.size !== after.size) return false;
  for (const [place, value] of after) if (before.get(place) !== value) return false;
  const savedExpiry = new Map(saved.cookies.map((cookie) => [cookiePlace(cookie), cookie.expires]));
  return renewed.cookies.every((cookie) => sameExpiry(savedExpiry.get(cookiePlace(cookie))!, cookie.expires, nowSeconds));
}

/**
 * A sliding expiry counts once it moved by more than a tenth of the life the saved cookie had left:
 * a cookie the site extends at every load is saved often enough to stay alive, and the browser's
 * own rounding or capping of a far expiry is no renewal. A session cookie (-1) becoming a
 * persistent one, or the reverse, always counts.
 */
function sameExpiry(saved: number, renewed: number, nowSeconds: number): boolean {
  if (saved === renewed) return true;
  if (saved === -1 || renewed === -1) return false;
  return Math.abs(renewed - saved) <= Math.max(0, saved - nowSeconds) / 10;
}

/** `left`, with the saved sessionStorage of each origin `left` holds none for. */
function withUnreadSessionStorage(saved: StorageState, left: StorageState): StorageState {
  const unread = saved.origins.filter((origin) => origin.sessionStorage?.length && !left.origins.some((each) => each.origin === origin.origin && each.sessionStorage?.length));
  if (unread.length === 0) return left;
  const origins = left.origins.map((origin) => {
    const kept = unread.find((each) => each.origin === origin.origin);
    return kept ? { ...origin, sessionStorage: kept.sessionStorage } : origin;
  });
  for (const kept of unread) if (!origins.some((origin) => origin.origin === kept.origin)) origins.push({ origin: kept.origin, localStorage: [], sessionStorage: kept.sessionStorage });
  return { ...left, origins };
}
