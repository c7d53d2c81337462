import type { LeaseGrant } from "../../domain/browser-provider.ts";
import { sha256Hex } from "./digest.ts";

/** How long an admin call to a browser task's proxy may take. */
export const adminCallTimeoutMs = 5_000;

/** Grant a lease, or end the lease of that id. */
export type LeaseChange = { grant: LeaseGrant } | { end: string };

/**
 * Grants a lease on the browser task's proxy at `origin` (`PUT /lease`), or ends one
 * (`DELETE /lease?lease_id=`). The proxy is given only the token's digest. `browser` names the
 * browser in an error.
 */
export async function leaseCall(origin: string, adminSecret: string, change: LeaseChange, browser: string): Promise<void> {
  const method = "grant" in change ? "PUT" : "DELETE";
  const url = new URL(`${origin}/lease`);
  if ("end" in change) url.searchParams.set("lease_id", change.end);
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${adminSecret}`, "content-type": "application/json" },
    body:
      "grant" in change
        ? JSON.stringify({ lease_id: change.grant.id, token_sha256: sha256Hex(change.grant.token), expires_at: change.grant.expiresAt.toISOString() })
        : undefined,
    signal: AbortSignal.timeout(adminCallTimeoutMs),
  });
  if (response.status !== 204) throw new Error(`${browser} answered ${method} /lease with HTTP ${response.status}`);
}
