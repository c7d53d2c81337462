import { build, type BuildOptions } from "esbuild";
import { cp, mkdir, readFile } from "node:fs/promises";
import { findPackageJSON } from "node:module";
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { hostedLoginAssetFolder, hostedLoginAssetTypes } from "#shared/hosted-login/asset-files.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

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

/**
 * Left out of the bundle of a function that runs the login browser and shipped beside it, as
 * installed, in its own node_modules: `@sparticuz/chromium` unpacks the Chromium kept in its
 * package's `bin/` directory, which it finds next to its own code, and playwright-core finds its
 * files from its own directory (`__dirname`), which a bundled ESM file has neither of.
 */
export const browserPackages = ["@sparticuz/chromium", "playwright-core"] as const;

/** The esbuild options that `NodejsFunction` derives from `lambdaBundle`, for building outside CDK. */
export function esbuildOptions(bundleAwsSdk: boolean = lambdaBundle.bundleAwsSdk, runsBrowser = false): BuildOptions {
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
    external: [...(bundleAwsSdk ? [] : awsSdkModules), ...(runsBrowser ? browserPackages : [])],
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
  await Promise.all(
    named.map((entry) =>
      build({ ...esbuildOptions(), entryPoints: [join(repoRoot, entry)], outfile: join(dirname(bundle), threadWorkerFile(entry)), logLevel: "warning" }),
    ),
  );
  return named.map(threadWorkerFile);
}

/**
 * Files that bundled code reads at run time from beside its own module (`new URL("./<name>",
 * import.meta.url)`), by the name its code holds, and where the repository keeps them: a bundle that
 * names one gets a copy of its files at the same place next to it, where the same URL finds them.
 */
const hostedLoginSources = "shared/hosted-login";
const besideFiles: readonly { named: string; files: readonly string[] }[] = [
  { named: "./page.html", files: ["page.html"] },
  { named: hostedLoginAssetFolder, files: [...hostedLoginAssetTypes.keys()].map((name) => join(hostedLoginAssetFolder, name)) },
];

/** Copies next to the bundle file `bundle` the files of each `besideFiles` entry it names; returns their names. */
export async function copyBesideFiles(bundle: string): Promise<string[]> {
  const code = await readFile(bundle, "utf8");
  const named = besideFiles.filter((entry) => code.includes(`"${entry.named}"`)).flatMap((entry) => entry.files);
  await Promise.all(
    named.map(async (file) => {
      const target = join(dirname(bundle), file);
      await mkdir(dirname(target), { recursive: true });
      await cp(join(repoRoot, hostedLoginSources, file), target);
    }),
  );
  return named;
}

/**
 * Copies `packages` as installed in this repository, with every package they depend on, into
 * `outputDir` at the same paths under node_modules, so that a bundle there resolves the very
 * versions the tests ran against (and synth stays offline: no install). Returns the copied directories.
 */
export async function shipPackages(outputDir: string, packages: readonly string[]): Promise<string[]> {
  const shipped = new Set<string>();
  const pending = packages.map((name) => ({ name, from: join(repoRoot, "package.json"), optional: false }));
  for (let next = pending.pop(); next; next = pending.pop()) {
    const manifest = installedManifest(next.name, next.from);
    if (!manifest) {
      // An optional dependency npm did not install here (another platform's) is not needed here either.
      if (next.optional) continue;
      throw new Error(`${next.name}, needed by ${relative(repoRoot, next.from)}, is not installed`);
    }
    if (shipped.has(manifest)) continue;
    shipped.add(manifest);
    const { dependencies = {}, optionalDependencies = {} } = JSON.parse(await readFile(manifest, "utf8")) as Record<string, Record<string, string> | undefined>;
    for (const name of Object.keys(dependencies)) pending.push({ name, from: manifest, optional: name in optionalDependencies });
    for (const name of Object.keys(optionalDependencies)) pending.push({ name, from: manifest, optional: true });
  }
  const dirs = [...shipped].map((manifest) => relative(repoRoot, dirname(manifest)));
  const outside = dirs.filter((dir) => dir.startsWith("..") || isAbsolute(dir));
  if (outside.length > 0) throw new Error(`packages installed outside the repository cannot be shipped: ${outside.join(", ")}`);
  await Promise.all(dirs.map((dir) => cp(join(repoRoot, dir), join(outputDir, dir), { recursive: true, dereference: true })));
  return dirs;
}

/** The package.json of `name` as Node resolves it from the module `from`; undefined when it is not installed. */
function installedManifest(name: string, from: string): string | undefined {
  try {
    return findPackageJSON(name, from);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw error;
  }
}
