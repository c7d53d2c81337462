/**
 * The stand-ins' credentials: s3rver knows only this key (and checks no signature), and DynamoDB
 * Local and the local Step Functions endpoint take any. The local runtime puts them in its
 * environment, where the SDK's default chain finds them, as it finds a role's credentials in
 * Lambda: the clients are built the same way in both places.
 */
export function useStandInCredentials(env: NodeJS.ProcessEnv = process.env): void {
  Object.assign(env, { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" });
  delete env.AWS_SESSION_TOKEN;
  // A profile would win over them: the default chain skips the environment's keys while AWS_PROFILE is set.
  delete env.AWS_PROFILE;
}
