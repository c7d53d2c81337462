/**
 * Encrypts secrets at rest (credential values, TOTP secrets, in-flight login state, submitted
 * values). In AWS: envelope encryption with a KMS data key; locally: AES-256-GCM with a key file
 * under `.data/`. `context` (e.g. `{org, purpose}`) is bound to the ciphertext (KMS encryption
 * context / GCM additional data): a ciphertext opened with another context fails.
 */
export interface SecretBox {
  /** A self-describing, printable envelope (safe to store in DynamoDB). */
  seal(plaintext: string, context: Record<string, string>): Promise<string>;
  open(sealed: string, context: Record<string, string>): Promise<string>;
}
