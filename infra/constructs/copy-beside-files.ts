/**
 * `node infra/constructs/copy-beside-files.ts <bundle file>`: the functions' afterBundling step
 * (service-function.ts) for the files a bundle reads from beside itself at run time.
 */
import { copyBesideFiles } from "./bundling.ts";

const [bundle] = process.argv.slice(2);
if (!bundle) throw new Error("usage: copy-beside-files.ts <bundle file>");
await copyBesideFiles(bundle);
