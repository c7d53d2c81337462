import { lookup } from "node:dns/promises";

/** Every address the system's resolver (getaddrinfo) gives for `host`, in its order. */
export async function systemResolver(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map(({ address }) => address);
}
