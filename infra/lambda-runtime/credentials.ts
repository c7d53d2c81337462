/**
 * Stands in for `@aws-sdk/credential-provider-node` in every Lambda bundle (`lambdaBundle.alias`).
 * Lambda hands a function its role's credentials in environment variables, so the default
 * chain's other sources (shared config files, SSO, web identity, the instance metadata service)
 * never answer there; they carried about 90 KB of nested SSO and STS clients into each bundle.
 */
export { fromEnv as defaultProvider } from "@aws-sdk/credential-provider-env";
