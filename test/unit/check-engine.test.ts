import { describe, expect, it } from "vitest";
import { checkEngine, checkWithEngines } from "#shared/domain/check-engine.ts";
import type { Connection } from "#shared/domain/connection.ts";
import type { LoginEngineKind, ProbeOutcome, SessionEvidence } from "#shared/login/types.ts";

const evidence = (basis: SessionEvidence["basis"], engine?: LoginEngineKind): SessionEvidence => ({
  version: 2,
  basis,
  salt: "s",
  signedIn: basis === "verified" ? [{ kind: "sign_out" }] : [],
  signInPlaces: [],
  sessionCookies: [],
  ...(engine ? { engine } : {}),
});

describe("the engine a health check asks", () => {
  it.each([
    ["an HTTP login whose evidence cannot tell", "http", evidence("unverifiable", "http"), "browser"],
    ["a browser login whose evidence cannot tell", "browser", evidence("unverifiable", "browser"), "browser"],
    ["an HTTP login whose evidence tells over HTTP", "http", evidence("verified", "http"), "http"],
    ["an HTTP login whose evidence a browser check learnt", "http", evidence("verified", "browser"), "browser"],
    ["a browser login whose evidence an HTTP check learnt", "browser", evidence("verified", "http"), "http"],
    ["evidence from before its engine was noted", "browser", evidence("verified"), "browser"],
    ["a login from before evidence was learnt", "http", null, "http"],
  ] as const)("%s", (_, loginEngine, given, expected) => {
    expect(checkEngine({ login_engine: loginEngine }, given)).toBe(expected);
  });
});

describe("checks that cannot tell", () => {
  /** Answers each engine's probes from its own list, and writes down which engine was asked. */
  function engines(answers: Record<LoginEngineKind, ProbeOutcome["state"][]>) {
    const asked: LoginEngineKind[] = [];
    return {
      asked,
      engine: {
        async probe(target: { engine?: LoginEngineKind | null }): Promise<ProbeOutcome> {
          const kind = target.engine!;
          asked.push(kind);
          const state = answers[kind].shift()!;
          return state === "logged_in" ? { state } : { state, reason: `${kind} says ${state}` };
        },
      },
    };
  }
  const connection = (inconclusiveChecks: number) =>
    ({ domain: "app.example", login_url: null, allowed_domains: [], login_engine: "http", record_session: false, org: "o", id: "c", post_login_url: "https://app.example/", inconclusive_checks: inconclusiveChecks }) as unknown as Connection & { post_login_url: string };
  const session = { cookies: [], origins: [] };

  it("counts them, and the third in a row asks the other engine too and starts the count again", async () => {
    const fake = engines({ browser: ["inconclusive", "inconclusive"], http: ["logged_in"] });

    const second = await checkWithEngines(fake.engine, connection(1), session, evidence("unverifiable", "http"));
    const third = await checkWithEngines(fake.engine, connection(2), session, evidence("unverifiable", "http"));

    expect(second).toMatchObject({ probe: { state: "inconclusive" }, checkedWith: "browser", note: null, inconclusiveChecks: 2 });
    expect(third).toMatchObject({ probe: { state: "logged_in" }, checkedWith: "http", inconclusiveChecks: 0 });
    expect(third.note).toBe("3 checks in a row could not tell in the browser whether the session works: this one asked over HTTP");
    expect(fake.asked).toEqual(["browser", "browser", "http"]);
  });

  it("a check that tells, or cannot reach the site, ends the row", async () => {
    const fake = engines({ browser: ["logged_out", "unreachable"], http: [] });

    expect(await checkWithEngines(fake.engine, connection(2), session, evidence("unverifiable", "http"))).toMatchObject({ checkedWith: "browser", inconclusiveChecks: 0 });
    expect(await checkWithEngines(fake.engine, connection(2), session, evidence("unverifiable", "http"))).toMatchObject({ checkedWith: "browser", inconclusiveChecks: 0 });
    expect(fake.asked).toEqual(["browser", "browser"]);
  });

  it("sends the other engine the session the first renewed, and hands that renewal back for the save-back", async () => {
    const renewed = { cookies: [{ name: "refresh", value: "second", domain: "app.example", path: "/", expires: -1, httpOnly: true, secure: true, sameSite: "Lax" as const }], origins: [] };
    const sent: unknown[] = [];
    const engine = {
      async probe(target: { engine?: LoginEngineKind | null }, state: unknown): Promise<ProbeOutcome> {
        sent.push(state);
        return target.engine === "browser" ? { state: "inconclusive", reason: "the browser cannot tell", session: renewed } : { state: "logged_in" };
      },
    };

    const third = await checkWithEngines(engine, connection(2), session, evidence("unverifiable", "http"));

    expect(sent).toEqual([session, renewed]);
    expect(third.probe).toEqual({ state: "logged_in", session: renewed });
  });
});
