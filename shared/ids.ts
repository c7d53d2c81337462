import { randomBytes } from "node:crypto";

export type IdPrefix = "ac" | "pr" | "bp" | "bs" | "cr" | "ev" | "rp";

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
const randomSpace = 2n ** 50n;

let lastTime = 0;
let lastRandom = 0n;

function base32(value: bigint, length: number): string {
  let text = "";
  for (let index = 0; index < length; index++) {
    text = alphabet[Number(value & 31n)] + text;
    value >>= 5n;
  }
  return text;
}

/**
 * Opaque id with a type prefix: 10 characters of millisecond time then 10 of randomness, so ids
 * sort by creation time; within one millisecond the random part counts up, which keeps the order
 * of ties (lists break created_at ties by id) the order in which this process made them.
 */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    lastRandom = BigInt(`0x${randomBytes(7).toString("hex")}`) % (randomSpace / 2n);
  } else {
    lastRandom = (lastRandom + 1n) % randomSpace;
  }
  return `${prefix}_${base32(BigInt(lastTime), 10)}${base32(lastRandom, 10)}`;
}
