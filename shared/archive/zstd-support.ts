import * as zlib from "node:zlib";

/** The first Node 22 whose `node:zlib` has zstd, the floor of the deployed functions (the repository itself needs 22.18: engines). */
const zstdSince = "22.15";

/**
 * Why this Node cannot run the service, in one line, or undefined when it can: archives are stored
 * zstd-compressed. Free of side effects, so `npm start` can ask before it loads the modules that
 * refuse such a Node as they load.
 */
export function zstdSupportProblem(nodeZlib: { createZstdDecompress?: unknown } = zlib, version: string = process.version): string | undefined {
  if (typeof nodeZlib.createZstdDecompress === "function") return undefined;
  return `this service needs Node ${zstdSince} or later (zstd in node:zlib); this is Node ${version}`;
}

/** For the modules that need zstd: called as they load, it refuses such a Node at a function's cold start. */
export function requireZstdSupport(): void {
  const problem = zstdSupportProblem();
  if (problem) throw new Error(problem);
}
