import { log } from "../log.ts";
import { isSessionEvidence } from "../login/session-evidence.ts";
import type { SessionEvidence } from "../login/types.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import type { Connection } from "./connection.ts";

/**
 * The login's evidence of a signed-in page (shared/login/session-evidence.ts) on the connection's
 * record: sealed, since its hashes could be tried against guesses of the account's name, and apart
 * from the profile, so a downloaded profile never carries it. Each login and re-auth replaces it.
 */

function sealContext(connection: Pick<Connection, "org" | "id">) {
  return { org: connection.org, connection: connection.id, purpose: "session_evidence" };
}

export async function evidenceFields(secrets: Pick<SecretBox, "seal">, connection: Pick<Connection, "org" | "id">, evidence: SessionEvidence) {
  return {
    session_evidence: evidence.basis,
    session_evidence_sealed: await secrets.seal(JSON.stringify(evidence), sealContext(connection)),
  } satisfies Partial<Connection>;
}

/**
 * The evidence the last login learnt, or null for a login from before evidence was learnt. One that
 * no longer opens (a lost local key file) counts as none: the checks fall back to the basic signs.
 */
export async function openEvidence(secrets: Pick<SecretBox, "open">, connection: Connection): Promise<SessionEvidence | null> {
  if (!connection.session_evidence_sealed) return null;
  try {
    const evidence: unknown = JSON.parse(await secrets.open(connection.session_evidence_sealed, sealContext(connection)));
    if (isSessionEvidence(evidence)) return evidence;
  } catch (error) {
    log.warn("session evidence does not open", { connectionId: connection.id, error: error instanceof Error ? error.name : "unknown" });
    return null;
  }
  log.warn("session evidence is not one this service wrote", { connectionId: connection.id });
  return null;
}
