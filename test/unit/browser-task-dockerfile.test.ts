import { existsSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { IgnoreStrategy } from "aws-cdk-lib";
import { build, transform } from "esbuild";
import { describe, expect, it } from "vitest";
import { routerSettings } from "#shared/browsers/router/settings.ts";

const root = resolve(import.meta.dirname, "../..");
const entry = "shared/browsers/task/entry.ts";
/** The router's service runs this image with its own entry point. */
const routerEntry = "shared/browsers/router/entry.ts";
const entries = [entry, routerEntry];
const dockerfilePath = "infra/browser-task/Dockerfile";

interface Instruction {
  keyword: string;
  args: string;
}

/**
 * No Dockerfile parser is installed, and this one uses only what a few lines can read: one
 * instruction per line, `\` at a line's end continuing it, `#` lines as comments.
 */
function stages(text: string): Instruction[][] {
  const logicalLines = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const result: Instruction[][] = [];
  for (const line of logicalLines) {
    const [keyword = "", ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    if (instruction.keyword === "FROM") result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

const words = (args: string) => args.split(/\s+/).filter(Boolean);
const withoutFlags = (args: string) => words(args).filter((word) => !word.startsWith("--"));

/** `KEY=value` pairs, or the older `KEY value` form of a single variable. */
function variables(args: string): Map<string, string> {
  if (!words(args)[0]?.includes("=")) {
    const [name = "", ...value] = words(args);
    return new Map([[name, value.join(" ")]]);
  }
  return new Map(words(args).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1).replace(/^"(.*)"$/, "$1")]));
}

const dockerfileStages = stages(readFileSync(join(root, dockerfilePath), "utf8"));
const finalStage = dockerfileStages.at(-1) ?? [];
const all = (keyword: string, stage = finalStage) => stage.filter((instruction) => instruction.keyword === keyword);
const finalEnv = new Map(all("ENV").flatMap((instruction) => [...variables(instruction.args)]));

/** Sources a stage takes from the build context (a `COPY --from` takes them from another stage). */
const sourcesOf = (stage: Instruction[]) =>
  [...all("COPY", stage), ...all("ADD", stage)]
    .filter((instruction) => !/--from=/.test(instruction.args))
    .flatMap((instruction) => withoutFlags(instruction.args).slice(0, -1).map((source) => source.replace(/^\.\//, "").replace(/\/$/, "")));
const contextSources = sourcesOf(finalStage);
const buildContext = IgnoreStrategy.docker(root, readFileSync(join(root, ".dockerignore"), "utf8").split(/\r?\n/));

function copied(file: string): boolean {
  return contextSources.some((source) => {
    const isDirectory = existsSync(join(root, source)) && statSync(join(root, source)).isDirectory();
    return file === source || (isDirectory && file.startsWith(`${source}/`));
  });
}

/**
 * A file read or spawned by path at run time (`join(import.meta.dirname, "unpack-chromium.ts")`,
 * `new URL("./page.html", import.meta.url)`) is no import that esbuild follows, but its name stands
 * as a string in the code beside the file that uses it (comments, stripped first, name files too).
 */
async function filesNamedIn(source: string): Promise<string[]> {
  const { code } = await transform(readFileSync(join(root, source), "utf8"), { loader: "ts" });
  const names = [...code.matchAll(/["'`](\.{0,2}\/?[\w./-]+\.(?:ts|js|mjs|json|html))["'`]/g)].map((match) => match[1]!);
  return names
    .map((name) => relative(root, resolve(root, dirname(source), name)))
    .filter((path) => !path.startsWith("..") && existsSync(join(root, path)) && statSync(join(root, path)).isFile());
}

/** Every file of the repository an entry loads, and every package it imports, followed transitively. */
async function entryNeeds(entryFile: string): Promise<{ files: string[]; packages: string[] }> {
  const entryPoints = new Set([entryFile]);
  for (;;) {
    const { metafile } = await build({
      entryPoints: [...entryPoints],
      absWorkingDir: root,
      bundle: true,
      write: false,
      // Needed by esbuild once there are several entry points, though nothing is written.
      outdir: "unwritten",
      metafile: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "silent",
    });
    const sources = Object.keys(metafile.inputs);
    const named = (await Promise.all(sources.map(filesNamedIn))).flat();
    const spawned = named.filter((file) => file.endsWith(".ts") && !entryPoints.has(file));
    if (spawned.length === 0) {
      const imported = Object.values(metafile.inputs).flatMap((input) => input.imports.filter((found) => found.external).map((found) => found.path));
      const packages = imported
        .filter((path) => !path.startsWith("node:") && !builtinModules.includes(path))
        .map((path) => path.split("/").slice(0, path.startsWith("@") ? 2 : 1).join("/"));
      return { files: [...new Set([...sources, ...named])].sort(), packages: [...new Set(packages)].sort() };
    }
    for (const file of spawned) entryPoints.add(file);
  }
}

const needs = new Map<string, ReturnType<typeof entryNeeds>>();
function entryNeedsOnce(entryFile: string): ReturnType<typeof entryNeeds> {
  if (!needs.has(entryFile)) needs.set(entryFile, entryNeeds(entryFile));
  return needs.get(entryFile)!;
}

describe("the browser task's Dockerfile", () => {
  it("runs the entry that runs locally, with node", () => {
    const entrypoints = all("ENTRYPOINT");

    expect(entrypoints).toHaveLength(1);
    expect(JSON.parse(entrypoints[0]!.args)).toEqual(["node", entry]);
  });

  it.each(entries)("copies every file %s loads into the image, and the build context keeps them", async (entryFile) => {
    const { files } = await entryNeedsOnce(entryFile);
    // package.json makes the .ts files ES modules and maps their #shared/* imports.
    const needed = ["package.json", ...files];

    expect(files).toContain(entryFile);
    expect(needed.filter((file) => !copied(file))).toEqual([]);
    expect(needed.filter((file) => buildContext.ignores(join(root, file)))).toEqual([]);
  });

  it("copies, in every stage, only files that exist and that the build context keeps", () => {
    const sources = dockerfileStages.flatMap(sourcesOf);

    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((source) => !existsSync(join(root, source)) || buildContext.ignores(join(root, source)))).toEqual([]);
  });

  it.each(entries)("installs every package %s imports, as a production dependency", async (entryFile) => {
    const { packages } = await entryNeedsOnce(entryFile);
    const { dependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const installs = dockerfileStages.flat().filter((instruction) => instruction.keyword === "RUN" && /\bnpm ci\b/.test(instruction.args));

    expect(packages.filter((name) => !(name in dependencies))).toEqual([]);
    expect(installs.some((instruction) => instruction.args.includes("--omit=dev"))).toBe(true);
    expect(all("COPY").some((instruction) => /--from=\S+/.test(instruction.args) && instruction.args.includes("node_modules"))).toBe(true);
  });

  it("runs as a user other than root", () => {
    const users = all("USER").map((instruction) => words(instruction.args)[0]?.split(":")[0]);

    expect(users.length).toBeGreaterThan(0);
    expect(["root", "0"]).not.toContain(users.at(-1));
  });

  it("serves the proxy on every interface at the port it exposes", () => {
    const exposed = all("EXPOSE").flatMap((instruction) => words(instruction.args).map((port) => port.split("/")[0]));

    expect(finalEnv.get("BROWSER_TASK_HOST")).toBe("0.0.0.0");
    expect(exposed).toEqual([finalEnv.get("BROWSER_TASK_PORT")]);
  });

  it("has the router, run from the same image, listen on every interface", () => {
    expect(finalEnv.get("ROUTER_HOST")).toBe("0.0.0.0");
  });

  it("sets only settings the entries read, and points the browser task's at a Chromium copied into the image", () => {
    const entrySource = readFileSync(join(root, entry), "utf8");
    const settings = [...finalEnv.keys()].filter((name) => name.startsWith("BROWSER_TASK_"));
    const routerVariables = [...finalEnv.keys()].filter((name) => name.startsWith("ROUTER_"));
    const copiedFromStages = all("COPY")
      .filter((instruction) => /--from=/.test(instruction.args))
      .map((instruction) => withoutFlags(instruction.args).at(-1) ?? "");

    expect(settings.filter((name) => !entrySource.includes(name))).toEqual([]);
    expect(routerVariables.filter((name) => !(name in routerSettings.shape))).toEqual([]);
    expect(copiedFromStages.some((destination) => finalEnv.get("BROWSER_TASK_CHROMIUM")?.startsWith(`${destination.replace(/\/$/, "")}/`))).toBe(true);
  });

  it("bakes no secret into the image", () => {
    const baked = dockerfileStages.flat().filter((instruction) => instruction.keyword === "ENV" || instruction.keyword === "ARG");
    const names = baked.flatMap((instruction) => [...variables(instruction.args).keys()]);

    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => /secret|token|passw|key|credential|auth/i.test(name))).toEqual([]);
  });

  it("pins its base image by version", () => {
    const bases = dockerfileStages.map((stage) => withoutFlags(stage[0]!.args)[0]);

    expect(bases.every((base) => /^node:\d+\.\d+\.\d+-[a-z]+-slim$/.test(base ?? ""))).toBe(true);
  });
});
