import { BlockList, isIPv4, isIPv6 } from "node:net";

/**
 * Which IP addresses the login engine may open a connection to. The check runs on the resolved
 * address, never on the host name, so a public-looking name that resolves inward is caught too.
 */

export type AddressClass = "loopback" | "private" | "link-local" | "reserved" | "public";

const ranges: Record<Exclude<AddressClass, "public">, Array<[string, number, "ipv4" | "ipv6"]>> = {
  loopback: [
    ["127.0.0.0", 8, "ipv4"],
    ["::1", 128, "ipv6"],
  ],
  private: [
    ["10.0.0.0", 8, "ipv4"],
    ["172.16.0.0", 12, "ipv4"],
    ["192.168.0.0", 16, "ipv4"],
    ["100.64.0.0", 10, "ipv4"],
    ["fc00::", 7, "ipv6"],
    ["fec0::", 10, "ipv6"],
  ],
  // 169.254.169.254 (the cloud metadata service) lives here, and AWS's IPv6 one (fd00:ec2::254) under fc00::/7.
  "link-local": [
    ["169.254.0.0", 16, "ipv4"],
    ["fe80::", 10, "ipv6"],
  ],
  reserved: [
    ["0.0.0.0", 8, "ipv4"],
    ["192.0.0.0", 24, "ipv4"],
    ["198.18.0.0", 15, "ipv4"],
    ["224.0.0.0", 4, "ipv4"],
    ["240.0.0.0", 4, "ipv4"],
    ["::", 128, "ipv6"],
    ["ff00::", 8, "ipv6"],
  ],
};

const blockLists = Object.entries(ranges).map(([addressClass, subnets]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family);
  return { addressClass: addressClass as AddressClass, list };
});

export function classifyAddress(address: string): AddressClass {
  const embedded = embeddedIpv4(address);
  if (embedded) return classifyAddress(embedded);
  const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : null;
  if (!family) throw new Error(`not an IP address: ${address}`);
  return blockLists.find(({ list }) => list.check(address, family))?.addressClass ?? "public";
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
 * The IPv4 address an IPv6 address carries (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d,
 * NAT64 64:ff9b::/96, 6to4 2002::/16), so ::ffff:127.0.0.1 is judged as 127.0.0.1.
 */
function embeddedIpv4(address: string): string | null {
  if (!isIPv6(address)) return null;
  const groups = ipv6Groups(address);
  const asIpv4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zeroPrefix = groups.slice(0, 5).every((group) => group === 0);
  if (zeroPrefix && groups[5] === 0xffff) return asIpv4(groups[6]!, groups[7]!);
  if (zeroPrefix && groups[5] === 0 && (groups[6]! > 0 || groups[7]! > 1)) return asIpv4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) {
    return asIpv4(groups[6]!, groups[7]!);
  }
  if (groups[0] === 0x2002) return asIpv4(groups[1]!, groups[2]!);
  return null;
}

/** The eight 16-bit groups of a valid IPv6 address, with `::` expanded and a dotted-quad tail converted. */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, "");
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(":").map((group) => parseInt(group, 16)) : []);
  const headGroups = parse(head);
  const tailGroups = tail === undefined ? [] : parse(tail);
  return [...headGroups, ...new Array<number>(8 - headGroups.length - tailGroups.length).fill(0), ...tailGroups];
}
