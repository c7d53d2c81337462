import { unzipSync } from "fflate";

/**
 * Every way a trace could hold `secret`: as typed, JSON-escaped, HTML-escaped, percent- or
 * form-encoded, UTF-16 (little- and big-endian), or inside base64 at any alignment.
 */
export function encodedForms(secret: string): Buffer[] {
  const bytes = Buffer.from(secret);
  const base64 = [0, 1, 2].map((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset, "x"), bytes]).toString("base64");
    // Only the groups made of the secret's bytes alone are the same wherever it sits.
    const whole = Math.floor((offset + bytes.length) / 3) * 4;
    return encoded.slice(offset === 0 ? 0 : 4, whole);
  });
  const html = secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  const texts = [secret, JSON.stringify(secret).slice(1, -1), html, encodeURIComponent(secret), new URLSearchParams({ v: secret }).toString().slice(2), ...base64];
  const utf16le = Buffer.from(secret, "utf16le");
  return [...new Set(texts)].map((text) => Buffer.from(text)).concat(utf16le, Buffer.from(utf16le).swap16());
}

/** Where a replay's zip holds one of `secrets` in one of its forms: in the zip's own bytes or in any entry once decompressed. */
export function replayLeaks(zip: Uint8Array, secrets: Record<string, string>): string[] {
  const places: Array<[string, Buffer]> = [["the zip's bytes", Buffer.from(zip)], ...Object.entries(unzipSync(zip)).map(([name, data]): [string, Buffer] => [name, Buffer.from(data)])];
  return places.flatMap(([place, bytes]) =>
    Object.entries(secrets).flatMap(([label, secret]) =>
      encodedForms(secret)
        .filter((form) => bytes.includes(form))
        .map((form) => `${place} holds the ${label} as ${JSON.stringify(form.toString("latin1"))}`),
    ),
  );
}
