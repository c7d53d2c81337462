import { sha256Hex } from "./digest.ts";

/** How long an admin call to a browser task's proxy may take. */
export const adminCallTimeoutMs = 5_000;

/**
 * Grants `lease` on the browser task's proxy at `origin` (`PUT /lease`), or ends the current lease
 * when `lease` is null (`DELETE /lease`). The proxy is given only the token's digest. `browser`
 * names the browser in an error.
 */
export async function leaseCall(origin: string, adminSecret: string, lease: { token: string; expiresAt: Date } | null, browser: string): Promise<void> {
  const method = lease ? "PUT" : "DELETE";
  const response = await fetch(`${origin}/lease`, {
    method,
    headers: { authorization: `Bearer ${adminSecret}`, "content-type": "application/json" },
    body: lease ? JSON.stringify({ token_sha256: sha256Hex(lease.token), expires_at: lease.expiresAt.toISOString() }) : undefined,
    signal: AbortSignal.timeout(adminCallTimeoutMs),
  });
  if (response.status !== 204) throw new Error(`${browser} answered ${method} /lease with HTTP ${response.status}`);
}
