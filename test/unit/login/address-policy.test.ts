import { describe, expect, it } from "vitest";
import { addressRefusal, classifyAddress, vetHost, type AddressClass, type Resolver } from "#shared/policy/addresses.ts";

/** One address inside each range of the IANA IPv4 and IPv6 special-purpose registries, and public neighbours. */
const table: Array<[range: string, address: string, expected: AddressClass]> = [
  ["0.0.0.0/8 this network", "0.1.2.3", "reserved"],
  ["10.0.0.0/8", "10.1.2.3", "private"],
  ["100.64.0.0/10 shared address space", "100.127.255.254", "private"],
  ["127.0.0.0/8", "127.255.0.9", "loopback"],
  ["169.254.0.0/16 (the metadata service)", "169.254.169.254", "link-local"],
  ["172.16.0.0/12", "172.31.255.255", "private"],
  ["192.0.0.0/24 IETF protocol assignments", "192.0.0.9", "reserved"],
  ["192.0.0.170/32 NAT64 discovery", "192.0.0.170", "reserved"],
  ["192.0.2.0/24 TEST-NET-1", "192.0.2.1", "reserved"],
  ["192.31.196.0/24 AS112-v4", "192.31.196.1", "reserved"],
  ["192.52.193.0/24 AMT", "192.52.193.1", "reserved"],
  ["192.88.99.0/24 deprecated 6to4 relay anycast", "192.88.99.2", "reserved"],
  ["192.168.0.0/16", "192.168.1.1", "private"],
  ["192.175.48.0/24 direct delegation AS112", "192.175.48.1", "reserved"],
  ["198.18.0.0/15 benchmarking", "198.19.255.1", "reserved"],
  ["198.51.100.0/24 TEST-NET-2", "198.51.100.7", "reserved"],
  ["203.0.113.0/24 TEST-NET-3", "203.0.113.10", "reserved"],
  ["224.0.0.0/4 multicast", "224.0.0.1", "reserved"],
  ["240.0.0.0/4 reserved", "240.0.0.1", "reserved"],
  ["255.255.255.255/32 limited broadcast", "255.255.255.255", "reserved"],
  ["public IPv4 beside 172.16.0.0/12", "172.32.0.1", "public"],
  ["public IPv4 beside 100.64.0.0/10", "100.128.0.1", "public"],
  ["public IPv4 beside 192.0.2.0/24", "192.0.3.1", "public"],
  ["public IPv4", "8.8.8.8", "public"],

  ["::1/128 loopback", "::1", "loopback"],
  ["::/128 unspecified", "::", "reserved"],
  ["::ffff:0:0/96 IPv4-mapped, judged as its IPv4 (loopback)", "::ffff:127.0.0.1", "loopback"],
  ["::ffff:0:0/96 IPv4-mapped, hex spelling", "::ffff:7f00:1", "loopback"],
  ["::ffff:0:0/96 IPv4-mapped (private)", "::ffff:10.0.0.1", "private"],
  ["::ffff:0:0/96 IPv4-mapped (metadata)", "::ffff:169.254.169.254", "link-local"],
  ["::ffff:0:0/96 IPv4-mapped (TEST-NET-3)", "::ffff:203.0.113.1", "reserved"],
  ["::ffff:0:0/96 IPv4-mapped (public)", "::ffff:8.8.8.8", "public"],
  ["::ffff:0:0:0/96 IPv4-translated", "::ffff:0:a9fe:a9fe", "reserved"],
  ["::ffff:0:0:0/96 IPv4-translated, public IPv4 inside", "::ffff:0:808:808", "reserved"],
  ["64:ff9b::/96 NAT64, judged as its IPv4 (private)", "64:ff9b::a00:1", "private"],
  ["64:ff9b::/96 NAT64 (loopback)", "64:ff9b::7f00:1", "loopback"],
  ["64:ff9b::/96 NAT64 (public)", "64:ff9b::808:808", "public"],
  ["64:ff9b:1::/48 local-use NAT64", "64:ff9b:1::a00:1", "reserved"],
  ["100::/64 discard-only", "100::1", "reserved"],
  ["2001::/23 IETF protocol assignments", "2001:1::1", "reserved"],
  ["2001::/32 Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
  ["2001:2::/48 benchmarking", "2001:2::1", "reserved"],
  ["2001:3::/32 AMT", "2001:3::1", "reserved"],
  ["2001:4:112::/48 AS112-v6", "2001:4:112::1", "reserved"],
  ["2001:10::/28 deprecated ORCHID", "2001:10::1", "reserved"],
  ["2001:20::/28 ORCHIDv2", "2001:20::1", "reserved"],
  ["2001:30::/28 drone remote ID", "2001:30::1", "reserved"],
  ["2001:db8::/32 documentation", "2001:db8::1", "reserved"],
  ["2002::/16 6to4, judged as its IPv4 (private)", "2002:a00:1::", "private"],
  ["2002::/16 6to4 (loopback)", "2002:7f00:1::1", "loopback"],
  ["2002::/16 6to4 (public)", "2002:808:808::1", "public"],
  ["2620:4f:8000::/48 direct delegation AS112", "2620:4f:8000::1", "reserved"],
  ["3fff::/20 documentation", "3fff::1", "reserved"],
  ["5f00::/16 segment routing", "5f00::1", "reserved"],
  ["fc00::/7 unique local (AWS's IPv6 metadata service)", "fd00:ec2::254", "private"],
  ["fe80::/10 link-local", "fe80::1", "link-local"],
  ["fe80::/10 link-local with a zone", "fe80::1%eth0", "link-local"],
  ["fec0::/10 deprecated site-local", "fec0::1", "private"],
  ["ff00::/8 multicast", "ff02::1", "reserved"],
  ["public IPv6 beside 2001::/23", "2001:200::1", "public"],
  ["public IPv6", "2606:4700::1111", "public"],
];

/** Ranges ipaddr.js calls unicast: outside 2000::/3, the only space allocated for global unicast (RFC 4291 section 2.4). */
const outsideGlobalUnicast: Array<[range: string, address: string]> = [
  ["100:0:0:1::/64 dummy prefix (RFC 9780)", "100:0:0:1::1"],
  ["::/96 deprecated IPv4-compatible (RFC 4291 section 2.5.5.1)", "::7f00:1"],
  ["4000::/2 unassigned", "4000::1"],
  ["e000::/4 unassigned", "e000::1"],
];

describe("address classes", () => {
  it.each(table)("%s: %s is %s", (_range, address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each(outsideGlobalUnicast)("%s: %s is reserved", (_range, address) => {
    expect(classifyAddress(address)).toBe("reserved");
  });
});

describe("address refusal", () => {
  it.each(table)("%s: %s is refused in AWS mode unless public", (_range, address, expected) => {
    expect(addressRefusal(address, false)).toBe(expected === "public" ? null : `a ${expected} address`);
  });

  it.each(table)("%s: %s is refused in local mode only when link-local or reserved", (_range, address, expected) => {
    const allowed = expected === "public" || expected === "loopback" || expected === "private";
    expect(addressRefusal(address, true)).toBe(allowed ? null : `a ${expected} address`);
  });
});

describe("vetting a host", () => {
  const awsMode = { allowPrivateTargets: false };
  const zones: Record<string, string[]> = {
    "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "mixed.example": ["93.184.215.14", "10.0.0.1"],
    "empty.example": [],
  };
  const stub = () => {
    const asked: string[] = [];
    const resolve: Resolver = async (host) => {
      asked.push(host);
      const answer = zones[host];
      if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      return answer;
    };
    return { resolve, asked };
  };

  it("answers every address of a public name, in the resolver's order", async () => {
    const { resolve } = stub();
    expect(await vetHost("public.example", awsMode, resolve)).toEqual({ outcome: "allowed", addresses: zones["public.example"] });
  });

  it("refuses a name when any of its addresses is refused", async () => {
    const { resolve } = stub();
    expect(await vetHost("mixed.example", awsMode, resolve)).toEqual({
      outcome: "refused",
      reason: "mixed.example: it resolves to 10.0.0.1, a private address, which this deployment does not reach",
    });
  });

  it("judges IP literals and localhost without asking the resolver", async () => {
    const { resolve, asked } = stub();
    expect(await vetHost("169.254.169.254", awsMode, resolve)).toEqual({
      outcome: "refused",
      reason: "169.254.169.254: a link-local address, which this deployment does not reach",
    });
    expect(await vetHost("localhost", awsMode, resolve)).toMatchObject({ outcome: "refused", reason: expect.stringContaining("localhost: it resolves to 127.0.0.1") });
    expect(await vetHost("localhost", { allowPrivateTargets: true }, resolve)).toEqual({ outcome: "allowed", addresses: ["127.0.0.1"] });
    expect(asked).toEqual([]);
  });

  it("tells a name that does not resolve, or resolves to nothing, from a refused one", async () => {
    const { resolve } = stub();
    expect(await vetHost("missing.example", awsMode, resolve)).toEqual({ outcome: "unresolved", reason: "could not resolve missing.example: ENOTFOUND" });
    expect(await vetHost("empty.example", awsMode, resolve)).toEqual({ outcome: "unresolved", reason: "could not resolve empty.example: no address" });
  });
});
