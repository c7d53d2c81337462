import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { authorizer, routes } from "#shared/routes.ts";

const root = resolve(import.meta.dirname, "../..");

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(folder, entry.name)) : [relative(root, join(folder, entry.name))],
  );
}

describe("the route table", () => {
  it("names every HTTP handler file exactly once", () => {
    const handlerFiles = filesUnder(join(root, "functions/http")).sort();

    expect(routes.map((route) => route.handler).sort()).toEqual(handlerFiles);
  });

  it("has unique names and unique method and path pairs", () => {
    expect(new Set(routes.map((route) => route.name)).size).toBe(routes.length);
    expect(new Set(routes.map((route) => `${route.method} ${route.path}`)).size).toBe(routes.length);
  });

  it("points at modules that export a handler function", async () => {
    for (const file of [...routes.map((route) => route.handler), authorizer.handler]) {
      const module = (await import(resolve(root, file))) as { handler?: unknown };
      expect(typeof module.handler, file).toBe("function");
    }
  });
});
