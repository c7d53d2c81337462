import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Deadline } from "#shared/deadline.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget, StepOutcome } from "#shared/login/types.ts";

/**
 * A step given a deadline stops waiting for a site that never answers there, with the site's failure,
 * rather than at the HTTP client's own timeout (15 s, longer than the test may run).
 */

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    switch (`${request.method} ${request.url}`) {
      case "GET /login":
        return response
          .writeHead(200, { "content-type": "text/html" })
          .end('<html><body><form method="post" action="/session"><input type="email" name="email"><input type="password" name="password"><button>Sign in</button></form></body></html>');
      // `/silent` and `POST /session` keep the request open and never answer.
      case "GET /silent":
      case "POST /session":
        return;
      default:
        return response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function failure(outcome: StepOutcome): Extract<StepOutcome, { kind: "failure" }> {
  if (outcome.kind !== "failure") throw new Error(`expected a failure, got ${outcome.kind}`);
  return outcome;
}

describe("a login step's deadline", () => {
  const engine = createLoginEngine({ allowPrivateTargets: true });
  const target = (path: string): LoginTarget => ({ domain: "127.0.0.1", loginUrl: `${base}${path}`, allowedDomains: [] });

  it("ends start's wait for a page that never comes: site_unreachable, naming the deadline", async () => {
    const outcome = failure(await engine.start(target("/silent"), Deadline.in(200)));
    expect(outcome.errorCode).toBe("site_unreachable");
    expect(outcome.message).toBe("127.0.0.1 did not answer before the step's deadline");
  });

  it("ends submit's wait for an answer that never comes, the options carrying the deadline", async () => {
    const form = await engine.start(target("/login"));
    if (form.kind !== "input") throw new Error(`expected the login form, got ${form.kind}`);
    const email = form.prompt.fields.find((field) => field.ref === "identifier")!;
    const password = form.prompt.fields.find((field) => field.ref === "password")!;
    const submission = { field_values: { [email.id]: "ada@example.com", [password.id]: "pw" } };
    const outcome = failure(await engine.submit(target("/login"), form.state, submission, { deadline: Deadline.in(200) }));
    expect(outcome.errorCode).toBe("site_unreachable");
    expect(outcome.message).toMatch(/did not answer before the step's deadline$/);
  });
});
