import { createHash } from "node:crypto";

/**
 * The hex SHA-256 by which a browser task knows a secret without holding it: the admin secret (given
 * at launch) and a lease's token (given at grant).
 */
export const sha256 = (secret: string) => createHash("sha256").update(secret).digest();

export const sha256Hex = (secret: string) => sha256(secret).toString("hex");
