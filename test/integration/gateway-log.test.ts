import type { Server } from "node:http";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { startGateway } from "../../infra/local/gateway.ts";
import { rawHttpExchange } from "../support/raw-requests.ts";

let gateway: { url: string; server: Server };
const lines: string[] = [];
const writeStdout = process.stdout.write.bind(process.stdout);

beforeAll(async () => {
  // Read at the first log line, after this: every request's line is written.
  vi.stubEnv("LOG_LEVEL", "debug");
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  gateway = await startGateway({ port: 0 });
});

afterAll(async () => {
  process.stdout.write = writeStdout;
  vi.unstubAllEnvs();
  await new Promise((done) => gateway?.server.close(done));
});

it("logs a hosted login page request by its path alone: the link's handoff code stays out of the log", async () => {
  const code = "handoff-code-that-must-not-be-logged";

  const page = await fetch(`${gateway.url}/login/ac_1?code=${code}&success_url=${encodeURIComponent("http://127.0.0.1:1/done")}`);

  expect(page.status).toBe(200);
  const logLines = lines.flatMap((chunk) => chunk.split("\n")).filter((line) => line.startsWith("{"));
  const requestLine = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.message === "request");
  expect(requestLine).toMatchObject({ method: "GET", path: "/login/ac_1", status: 200 });
  expect(lines.join("")).not.toContain(code);
});

it("answers a request target that is not a URL with 400, logs it without a path, and keeps serving", async () => {
  const answer = await rawHttpExchange(gateway.url, `GET http://[ HTTP/1.1\r\nHost: ${new URL(gateway.url).host}\r\nConnection: close\r\n\r\n`);
  const page = await fetch(`${gateway.url}/login/ac_1`);

  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  expect(answer).toContain('"code":"bad_request"');
  expect(page.status).toBe(200);
  const requestLines = lines
    .flatMap((chunk) => chunk.split("\n"))
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.message === "request");
  expect(requestLines).toContainEqual(expect.objectContaining({ method: "GET", status: 400 }));
});
