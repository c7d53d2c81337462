import { build, type BuildOptions } from "esbuild";
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How every Lambda is bundled: read by the stack (NodejsFunction) and by the bundle bench, so the
 * bench measures exactly what deploys.
 */
export const lambdaBundle = {
  target: "node22",
  format: "esm",
  minify: true,
  /** A separate .map file: stack traces map back to the TypeScript without growing the bundle. */
  sourcemap: true,
  sourcesContent: false,
  /** ESM entry points first, so esbuild can shake unused exports out of dual packages. */
  mainFields: ["module", "main"],
  /** Bundled CommonJS dependencies (tar-stream and its helpers) call `require`, which ESM lacks. */
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  /**
   * Bundled, though the Node 22 runtime ships AWS SDK v3: the deployed code is then the version
   * the tests ran against, and esbuild keeps only the commands a function sends (the runtime's
   * copy is whole CommonJS packages, read from disk at every cold start).
   */
  bundleAwsSdk: true,
} as const;

/** Left to the runtime when `bundleAwsSdk` is false. */
export const awsSdkModules = ["@aws-sdk/*"] as const;

/** The esbuild options that `NodejsFunction` derives from `lambdaBundle`, for building outside CDK. */
export function esbuildOptions(bundleAwsSdk: boolean = lambdaBundle.bundleAwsSdk): BuildOptions {
  return {
    bundle: true,
    platform: "node",
    target: lambdaBundle.target,
    format: lambdaBundle.format,
    minify: lambdaBundle.minify,
    sourcemap: lambdaBundle.sourcemap,
    sourcesContent: lambdaBundle.sourcesContent,
    mainFields: [...lambdaBundle.mainFields],
    banner: { js: lambdaBundle.banner },
    external: bundleAwsSdk ? [] : [...awsSdkModules],
  };
}

/**
 * Programs that bundled code starts as worker threads, by file name: a bundle that names
 * `<name>.mjs` gets the program built there next to it, and only such a bundle does.
 */
const threadWorkers = ["shared/archive/zstd-decoder-worker.ts"] as const;

/** The file a thread worker's program is built to, next to the bundle that starts it. */
const threadWorkerFile = (entry: string) => `${basename(entry, ".ts")}.mjs`;

/** Builds next to the bundle file `bundle`, with the same options, each thread worker it names; returns their files. */
export async function bundleThreadWorkers(bundle: string): Promise<string[]> {
  const code = await readFile(bundle, "utf8");
  const named = threadWorkers.filter((entry) => code.includes(threadWorkerFile(entry)));
  const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
  await Promise.all(
    named.map((entry) =>
      build({ ...esbuildOptions(), entryPoints: [join(repoRoot, entry)], outfile: join(dirname(bundle), threadWorkerFile(entry)), logLevel: "warning" }),
    ),
  );
  return named.map(threadWorkerFile);
}
