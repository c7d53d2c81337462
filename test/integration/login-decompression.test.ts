import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget } from "#shared/login/types.ts";
import { contentCodings, startCompressedSite, type CompressedSite } from "../sites/compressed-site.ts";

/** Far past the 10 MiB cap on a decoded page. */
const bombBytes = 64 * 1024 * 1024;

let site: CompressedSite;

beforeAll(async () => {
  site = await startCompressedSite({ bombBytes });
});

afterAll(async () => {
  await site?.stop();
});

const engine = createLoginEngine({ allowPrivateTargets: true });

function target(path: string): LoginTarget {
  return { domain: "127.0.0.1", loginUrl: `${site.url}${path}`, allowedDomains: [] };
}

describe.each(contentCodings)("a page sent with content-encoding %s", (coding) => {
  it("reads as the login page it is", async () => {
    const outcome = await engine.start(target(`/${coding}/login`));

    expect(outcome, JSON.stringify(outcome)).toMatchObject({
      kind: "input",
      prompt: { fields: [{ id: "identifier", observed_selector: "#email" }, { id: "password", observed_selector: "#password" }] },
    });
  });

  it("fails the step with site_unreachable when it decompresses past the cap", async () => {
    const outcome = await engine.start(target(`/${coding}/bomb`));

    expect(outcome).toEqual({ kind: "failure", errorCode: "site_unreachable", message: "127.0.0.1 sent a page bigger than 10485760 bytes once decompressed" });
  });
});
