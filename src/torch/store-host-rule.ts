/**
 * Which node hosts the c10d rendezvous' TCPStore, by torch's own rule, and
 * the warning for the endpoint that torch will not host although it is this
 * node's address (job/store-role.ts).
 *
 * torchrun's c10d backend hosts the store where `--rdzv-conf is_host` says,
 * else where `_matches_machine_hostname(endpoint host)` is true
 * (c10d_rendezvous_backend.py `_create_tcp_store`; the rule is in
 * torch/distributed/elastic/rendezvous/utils.py). Every release is true for
 * `localhost`, a loopback address literal, the hostname itself, the
 * canonical name getaddrinfo(hostname, AI_CANONNAME) gives, and an address
 * literal among the hostname's addresses; a release whose record says
 * `storeHostByAddress` (2.x) also for a name whose addresses meet the
 * hostname's. So an endpoint on the data network, while the hostname
 * resolves to the management network, is hosted by no node: every agent
 * waits for the store until the rendezvous times out.
 */
import { lookupService } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isLoopbackAddress, sameAddress } from '../host/ip-address.js';
import { addressesOf } from '../host/resolve-name.js';
import type { TorchRelease } from './releases.js';

/** `_matches_machine_hostname(endpoint)` on this host, its two parts. */
export interface StoreHostMatch {
  /** By name, or an address literal among the hostname's addresses: every release. */
  byName: boolean;
  /** Any of the endpoint's addresses among the hostname's: releases with storeHostByAddress. */
  byAddress: boolean;
  /** getaddrinfo(hostname), which both compare against; empty when it fails or was not needed. */
  hostnameAddresses: string[];
}

/** Whether `release`'s torchrun hosts the store where the endpoint matches so. */
export function hostsStore(match: StoreHostMatch, release: TorchRelease): boolean {
  return match.byName || (release.storeHostByAddress && match.byAddress);
}

/** What torch asks about this machine: gethostname() and getaddrinfo(it, AI_CANONNAME). */
export interface MachineNames {
  hostname: string;
  addresses: string[];
  canonicalName: string | null;
}

/**
 * `_matches_machine_hostname` for an endpoint host that resolves to
 * `endpointAddresses` (the literal itself for an address), step by step as
 * utils.py has it. Addresses compare by value: torch compares str(ip_address)
 * with getaddrinfo's text, both canonical.
 */
export function matchesMachineHostname(
  endpoint: string,
  endpointAddresses: readonly string[],
  machine: MachineNames,
): StoreHostMatch {
  const literal = isIP(endpoint) !== 0;
  const ofHostname = (address: string) =>
    machine.addresses.some((own) => sameAddress(own, address));
  return {
    byName:
      endpoint === 'localhost' ||
      (literal && isLoopbackAddress(endpoint)) ||
      endpoint === machine.hostname ||
      endpoint === machine.canonicalName ||
      (literal && ofHostname(endpoint)),
    byAddress: endpointAddresses.some(ofHostname),
    hostnameAddresses: machine.addresses,
  };
}

/** The rule on this host: looks up what torch would, then `matchesMachineHostname`. */
export async function storeHostMatch(
  endpoint: string,
  endpointAddresses: readonly string[],
  hostname: string,
): Promise<StoreHostMatch> {
  const byName = endpoint === 'localhost' || endpoint === hostname;
  // Where the hostname does not resolve, torch's getaddrinfo raises and
  // torchrun stops at once; with no address the rule holds only by name.
  const addresses = byName ? [] : await addressesOf(hostname);
  return matchesMachineHostname(
    endpoint,
    endpointAddresses,
    await machineNames(endpoint, hostname, addresses),
  );
}

/**
 * What torch compares `endpoint` with: the hostname, its addresses (as
 * getaddrinfo gives them) and, only for a name other than those, its
 * canonical name, which is the one lookup this makes.
 */
export async function machineNames(
  endpoint: string,
  hostname: string,
  hostnameAddresses: readonly string[],
): Promise<MachineNames> {
  const byName = endpoint === 'localhost' || endpoint === hostname || isIP(endpoint) !== 0;
  return {
    hostname,
    addresses: [...hostnameAddresses],
    canonicalName: byName ? null : await canonicalNameOf(hostnameAddresses),
  };
}

/**
 * getaddrinfo's AI_CANONNAME for the hostname, which Node does not expose:
 * the name getnameinfo gives its first address is the same official name
 * for an /etc/hosts entry (the first name on the address's line) and, with
 * DNS, the PTR name, which a cluster's DNS keeps equal to the forward one.
 */
async function canonicalNameOf(hostnameAddresses: readonly string[]): Promise<string | null> {
  const [first] = hostnameAddresses;
  if (first === undefined) return null;
  try {
    return (await lookupService(first, 0)).hostname;
  } catch {
    return null;
  }
}
