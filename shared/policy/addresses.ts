import ipaddr from "ipaddr.js";
import { isIP } from "node:net";

/**
 * Which IP addresses the login engine may open a connection to, and an AWS-mode pool's browsers
 * may start at. The check runs on the resolved address, never on the host name, so a
 * public-looking name that resolves inward is caught too.
 * The special-purpose ranges come from ipaddr.js's table (the IANA registries); only its
 * `unicast` is public, so a range it adds later is refused until classed here.
 */

export type AddressClass = "loopback" | "private" | "link-local" | "reserved" | "public";

const classOfRange: Record<string, AddressClass> = {
  unicast: "public",
  loopback: "loopback",
  private: "private",
  carrierGradeNat: "private",
  uniqueLocal: "private",
  deprecatedSiteLocal: "private",
  // 169.254.169.254 (the cloud metadata service) lives here, and AWS's IPv6 one (fd00:ec2::254) under fc00::/7.
  linkLocal: "link-local",
};

// Only 2000::/3 is allocated for global unicast (RFC 4291 section 2.4, IANA IPv6 Address Space);
// ipaddr.js calls the rest of the unassigned space `unicast`, e.g. RFC 9780's 100:0:0:1::/64.
const globalUnicastV6 = ipaddr.IPv6.parseCIDR("2000::/3");
// Well-known NAT64 (RFC 6052); ipaddr.js's `rfc6052` also holds the local-use 64:ff9b:1::/48 (RFC 8215), which carries no fixed IPv4 position.
const wellKnownNat64 = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

export function classifyAddress(address: string): AddressClass {
  if (isIP(address) === 0) throw new Error(`not an IP address: ${address}`);
  return classify(ipaddr.parse(address));
}

function classify(address: ipaddr.IPv4 | ipaddr.IPv6): AddressClass {
  if (address.kind() === "ipv6") {
    const ipv6 = address as ipaddr.IPv6;
    const embedded = embeddedIpv4(ipv6);
    if (embedded) return classify(embedded);
    if (!ipv6.match(globalUnicastV6) && ipv6.range() === "unicast") return "reserved";
  }
  return classOfRange[address.range()] ?? "reserved";
}

/**
 * Why the engine must not connect to `address` ("a loopback address"), or null when it may. Loopback and private networks
 * are allowed only when the deployment allows private targets (local mode, so test sites on
 * 127.0.0.1 work); link-local and reserved addresses never are: no website lives there, the
 * metadata service does.
 */
export function addressRefusal(address: string, allowPrivateTargets: boolean): string | null {
  const addressClass = classifyAddress(address);
  if (addressClass === "public") return null;
  if (allowPrivateTargets && (addressClass === "loopback" || addressClass === "private")) return null;
  return `a ${addressClass} address`;
}

/**
 * The IPv4 address an IPv6 address carries (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96,
 * 6to4 2002::/16), so ::ffff:127.0.0.1 is judged as 127.0.0.1.
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  if (address.match(wellKnownNat64)) return new ipaddr.IPv4(address.toByteArray().slice(12, 16));
  if (address.range() === "6to4") return new ipaddr.IPv4(address.toByteArray().slice(2, 6));
  return null;
}

/** Host name -> every address it resolves to; throws when it does not resolve. */
export type Resolver = (host: string) => Promise<string[]>;

export type HostVerdict =
  | { outcome: "allowed"; addresses: string[] }
  | { outcome: "refused"; reason: string }
  /** The name did not resolve, so where it leads is not known. */
  | { outcome: "unresolved"; reason: string };

/**
 * Resolves `host` once (an IP literal stands for itself) and vets every answer, so one inward
 * address refuses the name. `localhost` is 127.0.0.1 without asking the resolver: it is loopback
 * whatever DNS says (RFC 6761; Chromium never asks DNS for it), some systems answer ::1 for it
 * first, and local sites listen on 127.0.0.1.
 */
export async function vetHost(host: string, policy: { allowPrivateTargets: boolean }, resolve: Resolver): Promise<HostVerdict> {
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else if (host === "localhost") addresses = ["127.0.0.1"];
  else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      const cause = (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));
      return { outcome: "unresolved", reason: `could not resolve ${host}: ${cause}` };
    }
  }
  if (addresses.length === 0) return { outcome: "unresolved", reason: `could not resolve ${host}: no address` };
  for (const address of addresses) {
    const refusal = addressRefusal(address, policy.allowPrivateTargets);
    if (!refusal) continue;
    const what = address === host ? refusal : `it resolves to ${address}, ${refusal}`;
    return { outcome: "refused", reason: `${host}: ${what}, which this deployment does not reach` };
  }
  return { outcome: "allowed", addresses };
}
