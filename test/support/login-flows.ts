import type Kernel from "@onkernel/sdk";
import type { ManagedAuth } from "@onkernel/sdk/resources/auth/connections";
import { storedStorageState } from "#shared/archive/session-archive.ts";
import type { StorageState } from "#shared/archive/storage-state.ts";
import type { LoginShape, LoginSite } from "../sites/login-site.ts";
import { eventually } from "./poll.ts";

export type Connection = ManagedAuth;

/** Waits until the connection's flow asks for input or ends. */
export function nextFlowState(client: Kernel, id: string, seconds = 30): Promise<Connection> {
  return eventually(
    async () => {
      const connection = await client.auth.connections.retrieve(id);
      const settled = connection.flow_status !== "IN_PROGRESS" || connection.flow_step === "AWAITING_INPUT";
      return settled ? connection : undefined;
    },
    `connection ${id} to wait for input or end its flow`,
    seconds,
  );
}

/**
 * What a user of the site types or picks at a step, read from the step's canonical fields and
 * choices: the test plays the person in front of the hosted login page.
 */
export function answerAs(site: LoginSite, shape: LoginShape, connection: Connection, options: { password?: string; mfa?: RegExp; account?: RegExp; sso?: boolean } = {}) {
  const fields = connection.fields ?? [];
  if (fields.length > 0) {
    const values: Record<string, string> = {};
    for (const field of fields) {
      if (field.type === "identifier") values[field.id] = site.user.email;
      else if (field.type === "password") values[field.id] = options.password ?? site.user.password;
      else if (field.type === "totp_code") values[field.id] = site.totp();
      else if (field.type === "code") values[field.id] = site.lastSms(shape) ?? site.lastEmailCode(shape) ?? "";
    }
    const ssoChoice = options.sso ? (connection.choices ?? []).find((choice) => choice.type === "sso_provider") : undefined;
    if (ssoChoice) return { selected_choice_id: ssoChoice.id };
    return { field_values: values };
  }
  const choices = connection.choices ?? [];
  const wanted = choices.find((choice) =>
    (choice.type === "mfa_method" && options.mfa?.test(choice.label)) ||
    (choice.type === "account" && options.account?.test(choice.label)) ||
    (choice.type === "sso_provider" && options.sso),
  );
  if (!wanted) throw new Error(`no answer for step: ${JSON.stringify({ fields, choices })}`);
  return { selected_choice_id: wanted.id };
}

/**
 * Drives a whole login through the gateway: login, then `answer` each step until the flow ends.
 * Answers every state the flow showed, the last one its end.
 */
export async function driveLogin(client: Kernel, id: string, answer: (connection: Connection) => Parameters<Kernel["auth"]["connections"]["submit"]>[1]): Promise<Connection[]> {
  await client.auth.connections.login(id);
  const states: Connection[] = [];
  for (let step = 0; step < 10; step++) {
    const connection = await nextFlowState(client, id);
    states.push(connection);
    if (connection.flow_status !== "IN_PROGRESS") return states;
    await client.auth.connections.submit(id, answer(connection));
    await eventually(async () => ((await client.auth.connections.retrieve(id)).flow_step !== "AWAITING_INPUT" ? true : undefined), "the submit to be taken");
  }
  throw new Error(`login of ${id} did not end within 10 steps`);
}

/** Drives a whole login on the test login site; answers the state it ended in. */
export async function logIn(
  client: Kernel,
  site: LoginSite,
  shape: LoginShape,
  id: string,
  options: Parameters<typeof answerAs>[3] = {},
): Promise<Connection> {
  return (await driveLogin(client, id, (connection) => answerAs(site, shape, connection, options))).at(-1) as Connection;
}

/** The storage state inside the profile's downloaded archive. */
export async function downloadedSession(client: Kernel, profileName: string): Promise<StorageState> {
  const response = await client.profiles.download(profileName);
  return storedStorageState("tar.zst", Buffer.from(await response.arrayBuffer()));
}

/** A fresh HTTP client carrying only the session's cookies for `url`'s host, as a `Cookie` header. */
export function cookieHeader(session: StorageState, url: string): string {
  const { hostname, pathname } = new URL(url);
  return session.cookies
    .filter((cookie) => cookie.domain.replace(/^\./, "") === hostname && pathname.startsWith(cookie.path))
    .map((cookie) => `${cookie.name}=${cookie.value}`)
    .join("; ");
}

/** Follows the connection's events stream, deletes the connection, and answers the flow statuses the stream sent until it ended. */
export async function flowStatusesAcrossDelete(client: Kernel, id: string): Promise<string[]> {
  const stream = await client.auth.connections.follow(id);
  const seen: string[] = [];
  const reading = (async () => {
    for await (const event of stream) if (event.event === "managed_auth_state") seen.push(event.flow_status);
  })();
  await eventually(async () => (seen.length > 0 ? true : undefined), "the stream's first state");
  await client.auth.connections.delete(id);
  await reading;
  return seen;
}
