/** What a function may touch, in words: CDK grants exactly these to the routes and the workflow tasks that name them. */
export type Grant =
  | "table:read"
  | "table:write"
  | "archives:read"
  | "archives:write"
  | "workflow:start"
  | "workflow:stop"
  /** SendTaskSuccess/Failure: resuming a login flow that waits for the user's input. */
  | "workflow:signal"
  /** Sealing and opening secrets (credentials, login state) with the secret box's KMS key. */
  | "secrets:use"
  /**
   * Leasing, resetting and destroying pooled browsers: stopping, describing and listing the browser
   * tasks, and deriving their admin secrets. Nothing in a stack deployed without pools.
   */
  | "browsers:lease";
