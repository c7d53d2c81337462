// Logs in to the demo site that `npm start` serves, as its demo user, with the official client;
// then uses the saved session to open the demo's "who am I" page. Run it with `npm run quickstart`.
import Kernel, { NotFoundError } from "@onkernel/sdk";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import { extract } from "tar-stream";

// Both always given: left out, the client would read KERNEL_BASE_URL and KERNEL_API_KEY and could
// start over on a real account's resources.
const api = process.env.API || "http://127.0.0.1:8080";
const kernel = new Kernel({ baseURL: api, apiKey: process.env.KEY || localApiKey() });
const demo = process.env.DEMO ?? "http://127.0.0.1:8081";
const user = { email: "dana@example.com", password: "demo-password", totpSecret: "DEMOSITEDEMOSITEDEMOSITEDEMOSITE" };

// Start over on each run: remove what an earlier run made.
for await (const old of kernel.auth.connections.list({ profile_name: "demo" })) await kernel.auth.connections.delete(old.id);
await kernel.profiles.delete("demo").catch(unlessNotFound);
await kernel.credentials.delete("demo-user").catch(unlessNotFound);

// The credential keeps the TOTP secret, so the service can tell the current code for the TOTP step.
await kernel.credentials.create({
  name: "demo-user",
  domain: "127.0.0.1",
  values: { email: user.email, password: user.password },
  totp_secret: user.totpSecret,
});
const connection = await kernel.auth.connections.create({
  domain: "127.0.0.1",
  profile_name: "demo",
  login_url: `${demo}/login`,
  credential: { name: "demo-user" },
});

await kernel.auth.connections.login(connection.id);
let outcome = "";
for await (const event of await kernel.auth.connections.follow(connection.id)) {
  if (event.event !== "managed_auth_state") continue;
  const asked = event.fields?.map((field) => field.type).join(", ");
  console.log(`login: ${event.flow_status} ${event.flow_step}${asked ? ` (asks for ${asked})` : ""}`);
  if (event.flow_step === "AWAITING_INPUT") {
    const field_values: Record<string, string> = {};
    for (const field of event.fields ?? []) field_values[field.id] = await answer(field.type);
    await kernel.auth.connections.submit(connection.id, { field_values });
  }
  outcome = event.error_message ? `${event.flow_status}: ${event.error_message}` : event.flow_status;
}
if (outcome !== "SUCCESS") throw new Error(`the login did not succeed (${outcome})`);

// The profile now holds the session: open the demo's "who am I" page with its cookies.
const state = await storageState(await kernel.profiles.download("demo", { format: "tar" }));
const cookie = state.cookies
  .filter((saved) => saved.domain === new URL(demo).hostname)
  .map((saved) => `${saved.name}=${saved.value}`)
  .join("; ");
const page = await fetch(`${demo}/whoami`, { headers: { cookie }, redirect: "manual" });
const signedIn = /Signed in as [^<]+/.exec(await page.text());
if (!signedIn) throw new Error(`the saved session did not open the who-am-I page (HTTP ${page.status})`);
console.log(`${demo}/whoami says: ${signedIn[0]}`);

async function answer(type: string): Promise<string> {
  if (type === "identifier") return user.email;
  if (type === "password") return user.password;
  if (type === "totp_code") return (await kernel.credentials.totpCode("demo-user")).code;
  throw new Error(`the demo site asked for a ${type}, which this example does not answer`);
}

/** A profile downloaded as a tar holds Playwright's storageState in storage_state.json. */
async function storageState(download: Response): Promise<{ cookies: Array<{ name: string; value: string; domain: string }> }> {
  const entries = extract();
  entries.end(Buffer.from(await download.arrayBuffer()));
  for await (const entry of entries) {
    const content = await text(entry);
    if (entry.header.name.endsWith("storage_state.json")) return JSON.parse(content);
  }
  throw new Error("the profile holds no storage_state.json");
}

/** The key `npm start` keeps for its org `local`: never sent to a service on another machine. */
function localApiKey(): string {
  const file = join(process.env.DATA_DIR || ".data", "api-key");
  const refuse = (why: string): never => {
    console.error(`${why}: set KEY to the API key of the service at ${api}.`);
    process.exit(1);
  };
  if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(api).hostname)) refuse(`${api} is not on this machine`);
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return refuse(`no API key in ${file} (npm start writes it there unless LOCAL_API_KEY is set)`);
  }
}

function unlessNotFound(error: unknown): void {
  if (!(error instanceof NotFoundError)) throw error;
}
