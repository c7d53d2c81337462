import * as z from "zod";
import { maxAcquireWaitSeconds, maxPoolSize, timeoutSecondsRange } from "../domain/pool.ts";
import { nameSchema } from "./schemas.ts";

const size = z
  .number()
  .int("must be a whole number of browsers")
  .min(1, "must be at least 1")
  .max(maxPoolSize, `must be at most ${maxPoolSize} (the largest pool this service runs)`);

const timeoutSeconds = z
  .number()
  .int("must be a whole number of seconds")
  .min(timeoutSecondsRange.min, `must be at least ${timeoutSecondsRange.min} seconds`)
  .max(timeoutSecondsRange.max, `must be at most ${timeoutSecondsRange.max} seconds (72 hours)`);

const fillRate = z.number().int("must be a whole percentage").min(1, "must be at least 1 (percent of the pool per minute)").max(100_000);

/** Any URL Chromium resolves (chrome:// pages too), as the official client documents. */
const startUrl = z.url({ error: "must be a URL" }).max(2048, "must be at most 2048 characters");

const profileRef = (id: z.ZodType<string>) =>
  z
    .object({ id: id.optional(), name: nameSchema.optional() })
    .refine((profile) => profile.id !== undefined || profile.name !== undefined, "must name the profile by id or name");

const profileId = z.string().min(1).max(64);

export const createPoolBody = z.object({
  name: nameSchema.optional(),
  size,
  timeout_seconds: timeoutSeconds.optional(),
  fill_rate_per_minute: fillRate.optional(),
  headless: z.boolean().optional(),
  start_url: startUrl.optional(),
  profile: profileRef(profileId).optional(),
});

export const updatePoolBody = z.object({
  // The official client documents "" as a no-op for the name.
  name: z.union([z.literal(""), nameSchema]).optional(),
  size: size.optional(),
  timeout_seconds: timeoutSeconds.optional(),
  fill_rate_per_minute: fillRate.optional(),
  headless: z.boolean().optional(),
  start_url: z.union([z.literal(""), startUrl]).optional(),
  // `{id: ""}` clears the profile.
  profile: profileRef(z.union([z.literal(""), profileId])).optional(),
  discard_all_idle: z.boolean().optional(),
});

export const deletePoolBody = z.object({ force: z.boolean().optional() });

export const acquireBody = z.object({
  acquire_timeout_seconds: z
    .number()
    .min(0, "must be at least 0")
    .max(maxAcquireWaitSeconds, `must be at most ${maxAcquireWaitSeconds} (API Gateway ends a request at 29 s)`)
    .optional(),
});

export const releaseBody = z.object({ session_id: z.string().min(1).max(64), reuse: z.boolean().optional() });
