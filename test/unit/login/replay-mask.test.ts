import { strFromU8, strToU8, unzipSync, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { browserStateValues, maskedTrace, replayMask, storedSecrets } from "#shared/login/browser/replay.ts";

const password = 'p@ss "word" & <more>';
const code = "482913";

/** A trace zip as Playwright writes one, reduced to the entries that can hold what was typed. */
function traceZip(entries: Record<string, string | Uint8Array>): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(entries).map(([name, data]) => [name, typeof data === "string" ? strToU8(data) : data])));
}

const lines = (...events: unknown[]) => events.map((event) => JSON.stringify(event)).join("\n");

describe("masking a flow's trace", () => {
  it("masks typed values in actions, snapshots and text resources in each written form, and drops request bodies", () => {
    const loginBody = `email=ada%40example.com&password=${encodeURIComponent(password)}`;
    const zip = traceZip({
      "trace.trace": lines(
        { type: "before", method: "fill", params: { selector: "#password", value: password } },
        { type: "before", method: "evaluateExpression", params: { arg: { value: { secrets: [password, code] } } } },
        { type: "frame-snapshot", snapshot: { html: ["INPUT", { __playwright_value_: password, type: "password" }] } },
      ),
      "trace.network": lines(
        {
          type: "resource-snapshot",
          snapshot: {
            request: { method: "POST", url: "http://127.0.0.1/login", postData: { mimeType: "application/x-www-form-urlencoded", text: loginBody, _file: "resources/body.dat" } },
            response: { status: 200, content: { _file: "resources/page.html" } },
          },
        },
      ),
      "resources/body.dat": loginBody,
      "resources/page.html": `<p>Code ${code} sent. Hello ${password.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")}</p>`,
      "resources/echo.json": JSON.stringify({ typed: password, form: new URLSearchParams({ p: password }).toString() }),
      "screencast/frame.jpeg": new Uint8Array([0xff, 0xd8, 0xff, ...strToU8(code), 0xff, 0xd9]),
    });

    const masked = unzipSync(maskedTrace(zip, [password, code, ""]));

    expect(Object.keys(masked).sort()).toEqual(["resources/echo.json", "resources/page.html", "screencast/frame.jpeg", "trace.network", "trace.trace"]);
    const actions = strFromU8(masked["trace.trace"]!).split("\n").map((line) => JSON.parse(line));
    expect(actions[0].params.value).toBe(replayMask);
    expect(actions[1].params.arg.value.secrets).toEqual([replayMask, replayMask]);
    expect(actions[2].snapshot.html[1].__playwright_value_).toBe(replayMask);
    const request = JSON.parse(strFromU8(masked["trace.network"]!)).snapshot.request;
    expect(request).toEqual({ method: "POST", url: "http://127.0.0.1/login" });
    expect(strFromU8(masked["resources/page.html"]!)).toBe(`<p>Code ${replayMask} sent. Hello ${replayMask}</p>`);
    expect(JSON.parse(strFromU8(masked["resources/echo.json"]!))).toEqual({ typed: replayMask, form: `p=${replayMask}` });
    expect([...masked["screencast/frame.jpeg"]!]).toEqual([0xff, 0xd8, 0xff, ...strToU8("******"), 0xff, 0xd9]);
  });

  it("masks the values of credential headers and of cookies in the network log, keeps other headers, and drops what every call answered", () => {
    const header = (name: string, value: string) => ({ name, value });
    const zip = traceZip({
      "trace.network": lines({
        type: "resource-snapshot",
        snapshot: {
          request: {
            method: "GET",
            url: "http://127.0.0.1/api/me",
            headers: [header("Authorization", "Bearer eyJhbGciOi"), header("proxy-authorization", "Basic cHJveHk6cHc="), header("Cookie", "sid=s3ss10n"), header("X-API-Key", "k3y"), header("Accept", "application/json")],
            cookies: [{ name: "sid", value: "s3ss10n" }],
          },
          response: { status: 200, headers: [header("Set-Cookie", "sid=r0tated; Path=/"), header("Content-Type", "application/json")], cookies: [{ name: "sid", value: "r0tated", path: "/" }] },
        },
      }),
      "trace.trace": lines(
        { type: "after", callId: "call@1", endTime: 1, result: { cookies: [{ name: "sid", value: "r0tated", domain: "127.0.0.1" }], origins: [{ origin: "http://127.0.0.1", localStorage: [{ name: "token", value: "t0ken" }] }] } },
        { type: "after", callId: "call@2", endTime: 2, result: { value: [{ place: "local http://127.0.0.1 token", value: "t0ken" }] } },
      ),
    });

    const masked = unzipSync(maskedTrace(zip, []));

    const { request, response } = JSON.parse(strFromU8(masked["trace.network"]!)).snapshot;
    expect(request.headers).toEqual([
      header("Authorization", replayMask),
      header("proxy-authorization", replayMask),
      header("Cookie", replayMask),
      header("X-API-Key", replayMask),
      header("Accept", "application/json"),
    ]);
    expect(request.cookies).toEqual([{ name: "sid", value: replayMask }]);
    expect(response.headers).toEqual([header("Set-Cookie", replayMask), header("Content-Type", "application/json")]);
    expect(response.cookies).toEqual([{ name: "sid", value: replayMask, path: "/" }]);
    expect(strFromU8(masked["trace.trace"]!).split("\n").map((line) => JSON.parse(line))).toEqual([
      { type: "after", callId: "call@1", endTime: 1 },
      { type: "after", callId: "call@2", endTime: 2 },
    ]);
  });

  it("keeps a request's body file that is also a response's body", () => {
    const zip = traceZip({
      "trace.network": lines(
        { type: "resource-snapshot", snapshot: { request: { method: "POST", postData: { _file: "resources/same.json" } }, response: { content: {} } } },
        { type: "resource-snapshot", snapshot: { request: { method: "GET" }, response: { content: { _file: "resources/same.json" } } } },
      ),
      "resources/same.json": "{}",
    });

    const masked = unzipSync(maskedTrace(zip, [code]));

    expect(Object.keys(masked).sort()).toEqual(["resources/same.json", "trace.network"]);
  });

  it("masks every value a browser keeps, and each string inside one that holds JSON, but no flag or setting", () => {
    const state = {
      cookies: [{ name: "sid", value: "s3ss10n-cookie", domain: "127.0.0.1", path: "/", expires: -1, httpOnly: true, secure: false, sameSite: "Lax" as const }],
      origins: [
        {
          origin: "http://127.0.0.1",
          localStorage: [{ name: "token", value: "local-t0ken" }, { name: "theme", value: "dark" }],
          sessionStorage: [{ name: "msal.account", value: JSON.stringify({ secret: "session-t0ken", nested: { refresh: "refresh-t0ken" }, expires: 3600 }) }],
          indexedDB: [{ name: "auth", version: 1, stores: [{ name: "users", records: [{ key: "user", value: { stsTokenManager: { accessToken: "idb-access-t0ken" } } }] }] }],
        },
      ],
    };

    const secrets = storedSecrets(browserStateValues(state));

    expect(secrets).toEqual(expect.arrayContaining(["s3ss10n-cookie", "local-t0ken", "session-t0ken", "refresh-t0ken", "idb-access-t0ken"]));
    expect(secrets).not.toContain("dark");
    expect(secrets).not.toContain("user");
  });
});
