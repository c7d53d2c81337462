import * as z from "zod/mini";
import { maxAcquireWaitSeconds, maxPoolSize, timeoutSecondsRange } from "../domain/pool.ts";
import { nameSchema } from "./schemas.ts";

const size = z
  .number()
  .check(
    z.int("must be a whole number of browsers"),
    z.minimum(1, "must be at least 1"),
    z.maximum(maxPoolSize, `must be at most ${maxPoolSize} (the largest pool this service runs)`),
  );

const timeoutSeconds = z
  .number()
  .check(
    z.int("must be a whole number of seconds"),
    z.minimum(timeoutSecondsRange.min, `must be at least ${timeoutSecondsRange.min} seconds`),
    z.maximum(timeoutSecondsRange.max, `must be at most ${timeoutSecondsRange.max} seconds (72 hours)`),
  );

const fillRate = z
  .number()
  .check(z.int("must be a whole percentage"), z.minimum(1, "must be at least 1 (percent of the pool per minute)"), z.maximum(100_000));

/** Which schemes and hosts a browser may start at is the core's rule (`vetStartUrl`): each launch checks it again. */
const startUrl = z.url({ error: "must be a URL" }).check(z.maxLength(2048, "must be at most 2048 characters"));

const profileRef = (id: z.ZodMiniType<string>) =>
  z
    .object({ id: z.optional(id), name: z.optional(nameSchema) })
    .check(z.refine((profile) => profile.id !== undefined || profile.name !== undefined, "must name the profile by id or name"));

const profileId = z.string().check(z.minLength(1), z.maxLength(64));

export const createPoolBody = z.object({
  name: z.optional(nameSchema),
  size,
  timeout_seconds: z.optional(timeoutSeconds),
  fill_rate_per_minute: z.optional(fillRate),
  headless: z.optional(z.boolean()),
  start_url: z.optional(startUrl),
  profile: z.optional(profileRef(profileId)),
});

export const updatePoolBody = z.object({
  // The official client documents "" as a no-op for the name.
  name: z.optional(z.union([z.literal(""), nameSchema])),
  size: z.optional(size),
  timeout_seconds: z.optional(timeoutSeconds),
  fill_rate_per_minute: z.optional(fillRate),
  headless: z.optional(z.boolean()),
  start_url: z.optional(z.union([z.literal(""), startUrl])),
  // `{id: ""}` clears the profile.
  profile: z.optional(profileRef(z.union([z.literal(""), profileId]))),
  discard_all_idle: z.optional(z.boolean()),
});

export const deletePoolBody = z.object({ force: z.optional(z.boolean()) });

export const acquireBody = z.object({
  acquire_timeout_seconds: z.optional(
    z
      .number()
      .check(
        z.minimum(0, "must be at least 0"),
        z.maximum(maxAcquireWaitSeconds, `must be at most ${maxAcquireWaitSeconds} (API Gateway ends a request at 29 s)`),
      ),
  ),
});

export const releaseBody = z.object({ session_id: z.string().check(z.minLength(1), z.maxLength(64)), reuse: z.optional(z.boolean()) });
