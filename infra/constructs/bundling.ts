import type { BuildOptions } from "esbuild";

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
