import type { IdPrefix } from "../ids.ts";

/**
 * `{id_or_name}` path parameters: an id when the text has the shape of one of `prefix` and that
 * record exists, otherwise a name. Undefined when neither finds a record.
 */
export async function findByIdOrName<T>(
  idOrName: string,
  prefix: IdPrefix,
  lookup: { byId(id: string): Promise<T | undefined>; idOfName(name: string): Promise<string | undefined> },
): Promise<T | undefined> {
  const byId = new RegExp(`^${prefix}_[0-9a-z]{20}$`).test(idOrName) ? await lookup.byId(idOrName) : undefined;
  if (byId) return byId;
  const id = await lookup.idOfName(idOrName);
  return id === undefined ? undefined : lookup.byId(id);
}
