/**
 * What Gloo binds when nccl-run sets nothing (SPEC "Outputs": `unmanaged`).
 * torch's ProcessGroupGloo::createDefaultDevice: with GLOO_SOCKET_IFNAME
 * (longer than one character) one device per listed name; else the
 * hostname, if it resolves to an address this host can bind; else
 * 127.0.0.1. Gloo itself (gloo/transport/tcp/device.cc):
 * - lookupAddrForIface takes the first getifaddrs entry with exactly that
 *   name, IPv4 or IPv6 (all IPv4 entries come first, see nccl-pick.ts), with
 *   no test of the link's state; no such entry is "Unable to find address";
 * - lookupAddrForHostname takes the first address getaddrinfo returns that
 *   bind(2) accepts: one the host holds, whatever its link's state (the
 *   kernel keeps an IPv4 address's local route while its link is down or
 *   has no carrier, and an IPv6 one while the link is admin-up; the fuzz,
 *   test/lab/nccl-fuzz.ts, found this against torch 2.6's Gloo), or any of
 *   127.0.0.0/8, which the kernel's local route gives to lo.
 */
import type { HostFacts, InterfaceFacts } from '../host/host-facts.js';
import { familyOf, interfaceHolding, isLoopbackAddress, withoutZone } from '../host/ip-address.js';
import { isUp } from '../host/link-state.js';
import type { NcclBind } from '../nccl/nccl-pick.js';

const LOOPBACK = '127.0.0.1';

/**
 * userIfname: the user's GLOO_SOCKET_IFNAME (null when unset or ignored);
 * hostnameAddresses: what the hostname resolves to, in getaddrinfo's order.
 * null when Gloo would fail.
 */
export function glooPick(
  facts: HostFacts,
  userIfname: string | null,
  hostnameAddresses: readonly string[],
): NcclBind | null {
  if (userIfname !== null) {
    // torch refuses an empty piece (makeTCPDevice: "interface or hostname can't be empty").
    const names = glooInterfaceNames(userIfname);
    return names.includes('') ? null : glooInterfaceAddress(facts, names[0] ?? '');
  }
  for (const address of hostnameAddresses) {
    const holder = bindableOn(facts, address);
    if (holder !== null) return { interface: holder.name, address: withoutZone(address) };
  }
  const lo = facts.interfaces.find((iface) => iface.kind === 'loopback');
  return { interface: lo?.name ?? 'lo', address: LOOPBACK };
}

/** The pieces torch hands to Gloo: std::getline drops only a trailing empty piece. */
export function glooInterfaceNames(value: string): string[] {
  const pieces = value.split(',');
  if (pieces.at(-1) === '') pieces.pop();
  return pieces;
}

/** What lookupAddrForIface binds on `name`: its first IPv4 address, else its first IPv6 one. */
export function glooInterfaceAddress(facts: HostFacts, name: string): NcclBind | null {
  const iface = facts.interfaces.find((candidate) => candidate.name === name);
  const address =
    iface?.addresses.find((a) => a.family === 'ipv4') ??
    iface?.addresses.find((a) => a.family === 'ipv6');
  return address === undefined ? null : { interface: name, address: withoutZone(address.address) };
}

/**
 * The interface whose address bind(2) would accept, or null. An admin-down
 * link has no IPv6 address left in the facts, so holding one is enough.
 */
function bindableOn(facts: HostFacts, address: string): InterfaceFacts | null {
  const holder = interfaceHolding(facts.interfaces, address);
  if (holder !== undefined) return holder;
  if (familyOf(address) === 'ipv4' && isLoopbackAddress(address)) {
    return facts.interfaces.find((iface) => iface.kind === 'loopback' && isUp(iface)) ?? null;
  }
  return null;
}
