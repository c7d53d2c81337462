import { setTimeout as sleep } from "node:timers/promises";
import { patience } from "./patience.ts";

/**
 * Polls `probe` until it returns a value other than undefined, or fails after `seconds` of an idle
 * machine (`patience` times that: see patience.ts).
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, idleSeconds = 20): Promise<T> {
  const seconds = idleSeconds * patience;
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await sleep(25);
  }
}
