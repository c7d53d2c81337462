import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { browserIsolationProblem } from "#shared/browsers/local-chromium.ts";

/** Where the local stack keeps its pooled browsers under a DATA_DIR. */
export const browsersDir = (dataDir: string) => join(dataDir, "browsers");

/** Where the local stack unpacks the packaged Chromium under a DATA_DIR. */
export const chromiumDir = (dataDir: string) => join(dataDir, "chromium");

/**
 * Why the pooled browsers of a service on `dataDir` (or on temporary directories, without one)
 * would not run each as a user of its own, or undefined where they do.
 */
export function localBrowserIsolationProblem(dataDir: string | undefined): Promise<string | undefined> {
  const chromium = process.env.BROWSER_EXECUTABLE ?? (dataDir ? chromiumDir(dataDir) : undefined);
  return browserIsolationProblem([...(dataDir ? [browsersDir(dataDir)] : []), ...(chromium ? [chromium] : [])]);
}

/** What `npm start` and `npm run api-key` say when browsers are not isolated from one another. */
export const oneOrgOnly = (problem: string) =>
  `${problem}.\nA browser leased by one org could then read the other orgs' browsers and this service's data: ` +
  "this service is for the org 'local' alone: it refuses every other org's key (403), and `npm run api-key -- --org` mints none (see docs/security.md).";

/**
 * Leaves DATA_DIR open to pass through (each browser's user reaches its profile and Chromium in
 * it) but not to list, and the stand-ins' data private to the service's user.
 */
export function keepDataPrivate(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o711);
  for (const standIn of ["dynamodb", "s3"]) {
    mkdirSync(join(dataDir, standIn), { recursive: true, mode: 0o700 });
    chmodSync(join(dataDir, standIn), 0o700);
  }
}
