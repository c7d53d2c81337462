import { setTimeout as sleep } from "node:timers/promises";

/** Polls `probe` until it returns a value other than undefined, or fails after `seconds`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, seconds = 20): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await sleep(25);
  }
}
