import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, expect, it } from "vitest";
import { services } from "#shared/services.ts";
import { startLoginSite, type LoginSite } from "../sites/login-site.ts";
import { logIn } from "../support/login-flows.ts";
import { startTestStack } from "../support/stack.ts";

let site: LoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
const seen: string[] = [];
const writeStdout = process.stdout.write.bind(process.stdout);

beforeAll(async () => {
  site = await startLoginSite();
  // A flow waits 18 s for input, room for a loaded CI machine.
  stack = await startTestStack({ timeScale: 0.03 });
  // Every log line the service writes, and every response body it sends, is kept to be searched.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    seen.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return (writeStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(response.headers.get("content-type")).startsWith("text/event-stream")) seen.push(await response.clone().text());
    return response;
  };
  client = new Kernel({ baseURL: stack.url, apiKey: stack.apiKey, fetch: recordingFetch });
});

afterAll(async () => {
  process.stdout.write = writeStdout;
  await stack?.stop();
  await site?.stop();
});

it("never shows the password, the codes or the TOTP secret in a log line, response, event or timeline entry; credentials at rest are ciphertext", async () => {
  const secretsTyped: string[] = [site.user.password, site.user.totpSecret];
  const typingSite = new Proxy(site, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "totp" || property === "lastSms") {
        return (...args: unknown[]) => {
          const code = (value as (...a: unknown[]) => string)(...args);
          if (code) secretsTyped.push(code);
          return code;
        };
      }
      return value;
    },
  });
  // Created outside the recording: a create response carries the current TOTP code by design (the
  // official client's `totp_code`), which may equal a code typed in the flow in the same 30 s.
  await new Kernel({ baseURL: stack.url, apiKey: stack.apiKey }).credentials.create({ name: "secret-cred", domain: "127.0.0.1", values: { identifier: site.user.email, password: site.user.password }, totp_secret: site.user.totpSecret });
  const connections = [];
  for (const shape of ["totp", "sms"] as const) {
    const created = await client.auth.connections.create({
      domain: "127.0.0.1",
      profile_name: `secrets-${shape}`,
      login_url: `${site.url}/${shape}/login`,
      health_checks: false,
      ...(shape === "totp" ? { credential: { name: "secret-cred" } } : {}),
    });
    const events = await client.auth.connections.follow(created.id);
    const streamed = (async () => {
      for await (const event of events) seen.push(JSON.stringify(event));
    })();
    const ended = await logIn(client, typingSite, shape, created.id);
    expect(ended.flow_status).toBe("SUCCESS");
    await streamed;
    connections.push(created.id);
  }
  for (const id of connections) {
    for await (const event of client.auth.connections.timeline(id, { limit: 100 })) seen.push(JSON.stringify(event));
  }
  for await (const credential of client.credentials.list()) seen.push(JSON.stringify(credential));

  const haystack = seen.join("\n");
  expect(secretsTyped.length).toBeGreaterThanOrEqual(4);
  for (const secret of secretsTyped) expect(haystack).not.toContain(secret);

  const { db, config } = services();
  const items = await db.send(new ScanCommand({ TableName: config.TABLE_NAME }));
  const atRest = JSON.stringify(items.Items);
  expect(atRest).toContain("secret-cred");
  for (const secret of [site.user.password, site.user.totpSecret]) expect(atRest).not.toContain(secret);
});
