import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseCircular, parseDependencyTree, type DependencyTree } from "dpdm";
import { beforeAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const sources = ["shared/**/*.ts", "functions/**/*.ts", "infra/**/*.ts"];

/** One row of the layer table in docs/architecture.md. */
interface Layer {
  name: string;
  /** Folders (ending in `/`) and files; a file belongs to the layer with its longest matching path. */
  paths: string[];
  mayImport: string[];
  /** npm packages (or scopes, ending in `/`) none of its files may import. */
  keptOut: string[];
}

const backticked = /`([^`]+)`/g;
const words = (cell: string) => [...cell.matchAll(backticked)].map((match) => match[1]!);

/** The table under "## Layers" in docs/architecture.md: the docs are where the allowed edges are kept. */
function layerTable(markdown: string): Layer[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith("Layers\n"));
  if (!section) throw new Error("docs/architecture.md has no '## Layers' section");
  const rows = section.split("\n").filter((line) => line.startsWith("|")).slice(2);
  return rows.map((row) => {
    const [name, paths, mayImport, keptOut] = row.split("|").slice(1, -1);
    return { name: name!.trim(), paths: words(paths!), mayImport: words(mayImport!), keptOut: words(keptOut ?? "") };
  });
}

function layerOf(layers: Layer[], file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const path of layer.paths) {
      const matches = path.endsWith("/") ? file.startsWith(path) : file === path;
      if (matches && path.length > (best?.length ?? -1)) best = { layer, length: path.length };
    }
  }
  return best?.layer;
}

const isOurs = (id: string) => /^(shared|functions|infra)\//.test(id);

/** Every import that breaks the table: a file in no layer, an edge not allowed, a package kept out. */
function violations(layers: Layer[], tree: DependencyTree): string[] {
  const found: string[] = [];
  for (const [file, dependencies] of Object.entries(tree)) {
    if (!isOurs(file)) continue;
    const from = layerOf(layers, file);
    if (!from) {
      found.push(`${file} is in no layer`);
      continue;
    }
    for (const dependency of dependencies ?? []) {
      const id = dependency.id ?? dependency.request;
      if (isOurs(id)) {
        const to = layerOf(layers, id);
        if (to && to !== from && !from.mayImport.includes(to.name)) found.push(`${file} (${from.name}) imports ${id} (${to.name})`);
      } else if (from.keptOut.some((kept) => (kept.endsWith("/") ? dependency.request.startsWith(kept) : dependency.request === kept || dependency.request.startsWith(`${kept}/`)))) {
        found.push(`${file} (${from.name}) imports the package ${dependency.request}`);
      }
    }
  }
  return found;
}

describe("the layering in docs/architecture.md", () => {
  const layers = layerTable(readFileSync(resolve(root, "docs/architecture.md"), "utf8"));
  let tree: DependencyTree;

  beforeAll(async () => {
    tree = await parseDependencyTree(sources, { cwd: root, tsconfig: resolve(root, "tsconfig.json"), transform: false });
  });

  it("names only layers it defines", () => {
    const names = new Set(layers.map((layer) => layer.name));
    expect(layers.length).toBeGreaterThan(5);
    expect(layers.flatMap((layer) => layer.mayImport).filter((name) => !names.has(name))).toEqual([]);
  });

  it("holds for every import of shared/, functions/ and infra/, type-only ones included", () => {
    expect(Object.keys(tree).filter(isOurs).length).toBeGreaterThan(200);
    expect(violations(layers, tree)).toEqual([]);
  });

  it("has no import cycle, type-only ones included", () => {
    expect(parseCircular(tree).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("finds an import the table does not allow, and a file outside every layer", () => {
    const forbidden: DependencyTree = {
      "shared/domain/connections.ts": [{ issuer: "shared/domain/connections.ts", request: "#shared/http/responses.ts", kind: "StaticImport" as never, id: "shared/http/responses.ts" }],
      "shared/nowhere-yet.ts": [],
    };
    const domain = layerOf(layers, "shared/domain/connections.ts")!;
    const http = layerOf(layers, "shared/http/responses.ts")!;
    expect(domain.mayImport).not.toContain(http.name);
    expect(violations(layers, forbidden)).toEqual([
      `shared/domain/connections.ts (${domain.name}) imports shared/http/responses.ts (${http.name})`,
      "shared/nowhere-yet.ts is in no layer",
    ]);
  });
});
