import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

// No markdown parser is installed (marked, markdown-it, mdast: none in node_modules), and these pages
// use only inline links and ATX headings, so a few regular expressions read them.
const fence = /^(```|~~~)/;
const inlineLink = /!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const inlineCode = /`[^`\n]*`/g;
const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/;

/** The lines outside fenced code blocks, where links and headings mean something. */
function proseLines(text: string): string[] {
  let inFence = false;
  return text.split("\n").filter((line) => {
    if (fence.test(line.trim())) {
      inFence = !inFence;
      return false;
    }
    return !inFence;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of proseLines(text)) {
    const match = heading.exec(line);
    if (!match) continue;
    const slug = match[1]!
      .replace(/`/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

function relativeLinks(page: string): string[] {
  const text = readFileSync(join(root, page), "utf8");
  return proseLines(text).flatMap((line) =>
    [...line.replace(inlineCode, "code").matchAll(inlineLink)].map((match) => match[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target)),
  );
}

/** Why a link from `page` to `target` does not resolve, or undefined when it does. */
function brokenBecause(page: string, target: string): string | undefined {
  const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
  const file = pathPart ? resolve(root, dirname(page), decodeURIComponent(pathPart)) : join(root, page);
  if (!existsSync(file)) return `no file ${relative(root, file)}`;
  if (anchor === undefined || !file.endsWith(".md")) return undefined;
  return anchors(readFileSync(file, "utf8")).has(anchor) ? undefined : `no heading #${anchor} in ${relative(root, file)}`;
}

describe("links in the README and docs/", () => {
  it("reads links from every page", () => {
    expect(pages).toContain("docs/api.md");
    expect(relativeLinks("README.md").length).toBeGreaterThan(0);
  });

  it.each(pages)("%s: every relative link names an existing file and heading", (page) => {
    const broken = relativeLinks(page).flatMap((target) => {
      const reason = brokenBecause(page, target);
      return reason ? [`${target}: ${reason}`] : [];
    });

    expect(broken).toEqual([]);
  });

  it("turns headings into GitHub's anchors", () => {
    const slugs = anchors("# Two words\n## `format=tar` downloads\n```\n# not a heading\n```\n## Two words\n### The hosted page's handoff, again\n");

    expect([...slugs]).toEqual(["two-words", "formattar-downloads", "two-words-1", "the-hosted-pages-handoff-again"]);
  });
});
