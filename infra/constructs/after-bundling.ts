/**
 * `node infra/constructs/after-bundling.ts <output dir> [<package>...]`: the functions' afterBundling
 * step (service-function.ts), once esbuild has written `<output dir>/index.mjs`. Next to the bundle
 * it builds the thread workers the bundle starts and copies the files it reads at run time; for a
 * function that runs the login browser, it also copies the packages the bundle leaves out into the
 * asset's node_modules.
 */
import { join } from "node:path";
import { bundleThreadWorkers, copyBesideFiles, shipPackages } from "./bundling.ts";

const [outputDir, ...packages] = process.argv.slice(2);
if (!outputDir) throw new Error("usage: after-bundling.ts <output dir> [<package>...]");
const bundle = join(outputDir, "index.mjs");
await bundleThreadWorkers(bundle);
await copyBesideFiles(bundle);
if (packages.length > 0) await shipPackages(outputDir, packages);
