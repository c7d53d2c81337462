import { readFile } from "node:fs/promises";
import { NotFoundError } from "../domain/errors.ts";

export interface Asset {
  body: string;
  contentType: string;
}

/**
 * The page's script and style, by the name page.html links each by (`../login-assets/<name>`), with
 * its content type: the one list of them, which the bundling copies and the asset route serves.
 */
export const hostedLoginAssetTypes: ReadonlyMap<string, string> = /* @__PURE__ */ new Map([
  ["login.js", "text/javascript; charset=utf-8"],
  ["login.css", "text/css; charset=utf-8"],
]);

/**
 * Where they are kept: assets/ beside this module, and beside the bundle once deployed
 * (infra/constructs/bundling.ts copies them for a bundle that names this folder).
 */
export const hostedLoginAssetFolder = "./assets/";

/** Serves the page's assets by name, each read once per process; no other file is served. */
export function hostedLoginAssets() {
  const folder = new URL(hostedLoginAssetFolder, import.meta.url);
  const read = new Map<string, Promise<Asset>>();
  return {
    asset(file: string): Promise<Asset> {
      const contentType = hostedLoginAssetTypes.get(file);
      if (!contentType) {
        return Promise.reject(new NotFoundError(`no hosted login asset '${file}': there are ${[...hostedLoginAssetTypes.keys()].join(" and ")}`));
      }
      let asset = read.get(file);
      if (!asset) {
        asset = readFile(new URL(file, folder), "utf8").then((body) => ({ body, contentType }));
        read.set(file, asset);
      }
      return asset;
    },
  };
}
