import { readFile } from "node:fs/promises";
import { NotFoundError } from "../domain/errors.ts";

export interface Asset {
  body: string;
  contentType: string;
}

/** Serves the page's assets by name, each read once per process. */
export function hostedLoginAssets() {
  /**
   * The page's script and style, in assets/ beside this module (and beside the bundle once
   * deployed: infra/constructs/bundling.ts copies each file a bundle names). No other file is served.
   */
  const assetFiles = new Map([
    ["login.js", { url: new URL("./assets/login.js", import.meta.url), contentType: "text/javascript; charset=utf-8" }],
    ["login.css", { url: new URL("./assets/login.css", import.meta.url), contentType: "text/css; charset=utf-8" }],
  ]);
  const read = new Map<string, Promise<Asset>>();
  return {
    asset(file: string): Promise<Asset> {
      const known = assetFiles.get(file);
      if (!known) return Promise.reject(new NotFoundError(`no hosted login asset '${file}': there are ${[...assetFiles.keys()].join(" and ")}`));
      let asset = read.get(file);
      if (!asset) {
        asset = readFile(known.url, "utf8").then((body) => ({ body, contentType: known.contentType }));
        read.set(file, asset);
      }
      return asset;
    },
  };
}
