/**
 * Which node hosts the c10d rendezvous' TCPStore, by torch's own rule, and
 * the warning for the endpoint that torch will not host although it is this
 * node's address.
 *
 * torchrun's c10d backend hosts the store where `--rdzv-conf is_host` says,
 * else where `_matches_machine_hostname(endpoint host)` is true
 * (c10d_rendezvous_backend.py `_create_tcp_store`; the rule is in
 * torch/distributed/elastic/rendezvous/utils.py). That function, in 1.13 and
 * 2.6 alike, is true for `localhost`, a loopback address literal, the
 * hostname itself, the canonical name getaddrinfo(hostname, AI_CANONNAME)
 * gives, and an address literal among the hostname's addresses; 2.x adds a
 * name whose addresses meet the hostname's (1.13 compares a name by name
 * only). So an endpoint on the data network, while the hostname resolves to
 * the management network, is hosted by no node: every agent waits for the
 * store until the rendezvous times out. Debian sid's torch 2.14.1 has the
 * function as 2.6 has it, byte for byte.
 */
import { lookupService } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { HostFacts } from '../host/host-facts.js';
import { interfaceHolding, isLoopbackAddress, sameAddress } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';
import { addressesOf } from '../resolve/master.js';

/** `_matches_machine_hostname(endpoint)` on this host, as each torch computes it. */
export interface StoreHostRule {
  /** torch 1.13: by name, or an address literal among the hostname's addresses. */
  torch113: boolean;
  /** torch 2.x: 1.13's rule, or any of the endpoint's addresses among the hostname's. */
  torch2: boolean;
  /** getaddrinfo(hostname), which both compare against; empty when it fails or was not needed. */
  hostnameAddresses: string[];
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
): StoreHostRule {
  const literal = isIP(endpoint) !== 0;
  const ofHostname = (address: string) =>
    machine.addresses.some((own) => sameAddress(own, address));
  const both =
    endpoint === 'localhost' ||
    (literal && isLoopbackAddress(endpoint)) ||
    endpoint === machine.hostname ||
    endpoint === machine.canonicalName ||
    (literal && ofHostname(endpoint));
  return {
    torch113: both,
    torch2: both || endpointAddresses.some(ofHostname),
    hostnameAddresses: machine.addresses,
  };
}

/** The rule on this host: looks up what torch would, then `matchesMachineHostname`. */
export async function storeHostRule(
  endpoint: string,
  endpointAddresses: readonly string[],
  hostname: string,
): Promise<StoreHostRule> {
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
 * The c10d endpoint host when torch's rule must be asked about it: a c10d
 * rendezvous without is_host whose endpoint is this node's address (given
 * as one, or as a name that resolves to one); null otherwise.
 */
export function storeHostQuestion(
  job: JobShape,
  facts: HostFacts,
  endpointAddresses: readonly string[],
): { endpoint: string; own: string } | null {
  const endpoint = job.master?.host;
  if (job.rdzvBackend !== 'c10d' || endpoint === undefined || job.isHost !== null) return null;
  const own = endpointAddresses.find(
    (address) => interfaceHolding(facts.interfaces, address) !== undefined,
  );
  return own === undefined ? null : { endpoint, own };
}

/**
 * The warning for a c10d endpoint that is this node's address where the
 * torch that will run (its version; null when unknown: 1.13's rule and
 * 2.x's both count) will not host the store; null when there is nothing to
 * say. machine: what plan.ts looked up for storeHostQuestion's endpoint.
 */
export function c10dStoreHostWarning(
  job: JobShape,
  facts: HostFacts,
  endpointAddresses: readonly string[],
  machine: MachineNames | null,
  torch: string | null = null,
): string | null {
  const question = storeHostQuestion(job, facts, endpointAddresses);
  if (question === null || machine === null) return null;
  const { endpoint, own } = question;
  const rule = matchesMachineHostname(endpoint, endpointAddresses, machine);
  const major = /^(\d+)\./.exec(torch ?? '')?.[1];
  const ruleOf = major === undefined ? null : Number(major) < 2 ? '1.13' : '2.x';
  const hosts =
    ruleOf === '1.13'
      ? rule.torch113
      : ruleOf === '2.x'
        ? rule.torch2
        : rule.torch113 && rule.torch2;
  if (hosts) return null;
  const fix = 'add --rdzv-conf is_host=1 on this node';
  const stall = 'no node would host it and the rendezvous would wait until it times out';
  const subject =
    isIP(endpoint) !== 0
      ? `the c10d endpoint ${endpoint} is this node's address`
      : `the c10d endpoint ${endpoint} resolves to this node's address ${own}`;
  if (rule.torch2 && ruleOf === '1.13') {
    return `${subject}, one its hostname ${facts.hostname} resolves to, but torch ${torch} compares a name only with the hostname and its canonical name (torch 2.x would host the store here), so ${stall}; ${fix}`;
  }
  if (rule.torch2) {
    return `${subject}, one its hostname ${facts.hostname} resolves to: torch 2.x hosts the store here, but torch 1.13 compares a name only with the hostname and its canonical name, so under 1.13 ${stall}; ${fix}`;
  }
  const resolved = rule.hostnameAddresses.join(', ') || 'nothing';
  const byName =
    ruleOf === '1.13'
      ? ''
      : ruleOf === '2.x'
        ? ' or a name resolving to one of those'
        : ' or, in torch 2.x, a name resolving to one of those';
  const who = torch === null ? 'torchrun' : `torch ${torch}'s torchrun`;
  return `${subject}, but ${who} hosts the store only at localhost, the hostname ${facts.hostname}, its canonical name, an address it resolves to (${resolved})${byName}: ${stall}; ${fix}`;
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
