import { describe, expect, it } from "vitest";
import { requireZstdSupport, zstdSupportProblem } from "#shared/archive/zstd-support.ts";

describe("zstdSupportProblem", () => {
  it("names the Node version needed and the one running, in one line, when node:zlib has no zstd", () => {
    // Act
    const problem = zstdSupportProblem({}, "v22.12.0");

    // Assess
    expect(problem).toBe("this service needs Node 22.15 or later (zstd in node:zlib); this is Node v22.12.0");
  });

  it("finds nothing wrong when node:zlib decodes zstd", () => {
    // Act
    const problem = zstdSupportProblem({ createZstdDecompress: () => undefined }, "v22.15.0");

    // Assess
    expect(problem).toBeUndefined();
  });

  it("finds nothing wrong with the Node running the tests, and lets the modules that need zstd load", () => {
    // Act
    const problem = zstdSupportProblem();

    // Assess
    expect(problem).toBeUndefined();
    expect(requireZstdSupport).not.toThrow();
  });
});
