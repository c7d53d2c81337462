/**
 * `node infra/constructs/ship-packages.ts <output dir> <package>...`: the afterBundling step of the
 * functions that run the login browser (service-function.ts), which copies the packages their
 * bundle leaves out into the asset's node_modules.
 */
import { shipPackages } from "./bundling.ts";

const [outputDir, ...packages] = process.argv.slice(2);
if (!outputDir || packages.length === 0) throw new Error("usage: ship-packages.ts <output dir> <package>...");
await shipPackages(outputDir, packages);
