/**
 * `node infra/constructs/bundle-thread-workers.ts <bundle file>`: the functions' afterBundling step
 * (service-function.ts), which runs once esbuild has written the function's bundle.
 */
import { bundleThreadWorkers } from "./bundling.ts";

const [bundle] = process.argv.slice(2);
if (!bundle) throw new Error("usage: bundle-thread-workers.ts <bundle file>");
await bundleThreadWorkers(bundle);
