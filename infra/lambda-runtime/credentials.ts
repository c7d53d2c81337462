/**
 * Stands in for `@aws-sdk/credential-provider-node` in every Lambda bundle (`lambdaBundle.alias`).
 * Lambda hands a function its role's credentials in environment variables, so the default
 * chain's other sources (shared config files, SSO, web identity, the instance metadata service)
 * never answer there; they carried about 90 KB of nested SSO and STS clients into each bundle.
 * Read here rather than through `@aws-sdk/credential-provider-env`, whose import of the SDK core
 * brought the partition tables and endpoint helpers (about 20 KB) into every bundle.
 */
export function defaultProvider(): () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }> {
  return async () => {
    const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = process.env;
    if (!accessKeyId || !secretAccessKey) throw new Error("no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
    return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  };
}
