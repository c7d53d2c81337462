import type { Browser, BrowserContext, Frame } from "playwright-core";
import type { StorageState } from "../../archive/storage-state.ts";

/**
 * A browser's whole login state as one storageState document: Playwright's cookies, localStorage and
 * IndexedDB, plus each origin's sessionStorage, which Playwright leaves out and single-page apps
 * (MSAL, for one) keep their login in.
 */

type NameValue = { name: string; value: string };

interface OriginSessionStorage {
  origin: string;
  entries: NameValue[];
}

/** The page globals the in-page functions below read (the project compiles without the DOM library). */
declare const location: { origin: string };
declare const sessionStorage: {
  readonly length: number;
  key(index: number): string | null;
  getItem(name: string): string | null;
  setItem(name: string, value: string): void;
};

/** Runs inside a frame: its origin's sessionStorage, or null where the frame has none to give. */
function readSessionStorage(): OriginSessionStorage | null {
  try {
    const entries: NameValue[] = [];
    for (let index = 0; index < sessionStorage.length; index++) {
      const name = sessionStorage.key(index);
      const value = name === null ? null : sessionStorage.getItem(name);
      if (name !== null && value !== null) entries.push({ name, value });
    }
    return { origin: location.origin, entries };
  } catch {
    // A sandboxed frame (opaque origin) or storage the user agent denies.
    return null;
  }
}

/**
 * Runs in every frame before the page's own scripts (an init script, so it is serialised on its
 * own: it may use nothing from this module). Only the frame's own origin gets its entries, and only
 * while the tab holds nothing for it yet: a tab keeps its sessionStorage across reloads, and what the
 * page wrote since must not be overwritten by the saved copy.
 */
function restoreSessionStorage(saved: OriginSessionStorage[]): void {
  const own = saved.find((each) => each.origin === location.origin);
  if (!own) return;
  try {
    if (sessionStorage.length > 0) return;
    for (const { name, value } of own.entries) sessionStorage.setItem(name, value);
  } catch {
    // A sandboxed frame or storage the user agent denies: the page runs without it, as it would anyway.
  }
}

/** Every open frame's sessionStorage, by origin; the first frame seen for an origin decides a name. */
async function sessionStorageOf(context: BrowserContext): Promise<Map<string, Map<string, string>>> {
  const frames: Frame[] = context.pages().flatMap((page) => page.frames());
  // A frame detached or navigating meanwhile has nothing to say.
  const read = await Promise.all(frames.map((frame) => frame.evaluate(readSessionStorage).catch(() => null)));
  const byOrigin = new Map<string, Map<string, string>>();
  for (const found of read) {
    // about:blank, data: and sandboxed documents have the opaque origin "null": nothing to restore into.
    if (!found || found.origin === "null" || found.entries.length === 0) continue;
    const entries = byOrigin.get(found.origin) ?? new Map<string, string>();
    for (const { name, value } of found.entries) if (!entries.has(name)) entries.set(name, value);
    byOrigin.set(found.origin, entries);
  }
  return byOrigin;
}

/** The context's cookies, localStorage, IndexedDB and each open origin's sessionStorage. */
export async function captureBrowserState(context: BrowserContext): Promise<StorageState> {
  const [state, sessions] = await Promise.all([context.storageState({ indexedDB: true }), sessionStorageOf(context)]);
  const asEntries = (entries: Map<string, string>) => [...entries].map(([name, value]) => ({ name, value }));
  const origins: StorageState["origins"] = state.origins.map((origin) => {
    const session = sessions.get(origin.origin);
    return session ? { ...origin, sessionStorage: asEntries(session) } : origin;
  });
  const known = new Set(origins.map((origin) => origin.origin));
  for (const [origin, entries] of sessions) {
    if (!known.has(origin)) origins.push({ origin, localStorage: [], sessionStorage: asEntries(entries) });
  }
  return { ...state, origins };
}

/**
 * A new context holding `state`: cookies, localStorage and IndexedDB through Playwright, and each
 * origin's sessionStorage put back as a page of that origin opens, before its scripts run.
 */
export async function openContextWithState(browser: Browser, state: StorageState): Promise<BrowserContext> {
  const context = await browser.newContext({ storageState: state });
  const saved: OriginSessionStorage[] = state.origins.flatMap((origin) =>
    origin.sessionStorage?.length ? [{ origin: origin.origin, entries: origin.sessionStorage.map(({ name, value }) => ({ name, value })) }] : [],
  );
  try {
    if (saved.length > 0) await context.addInitScript(restoreSessionStorage, saved);
  } catch (error) {
    await context.close();
    throw error;
  }
  return context;
}
