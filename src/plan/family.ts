/**
 * SPEC --family: auto follows the master's (first) address, else IPv4. A
 * master NCCL, Gloo and the store cannot use, or one only an explicit
 * --family disagrees with, is a configuration error at once.
 */
import { ConfigError } from '../errors.js';
import type { Family } from '../host/host-facts.js';
import { familyOf, isLinkLocalAddress } from '../host/ip-address.js';
import type { RendezvousEndpoint } from '../job/job-shape.js';
import { endpointSource } from '../job/rendezvous-master.js';
import { optionOrigin, type Settled } from '../options/settle-options.js';
import { originText } from '../origin.js';

export function settleFamily(
  { options, sources }: Settled,
  master: (RendezvousEndpoint & { addresses: readonly string[] }) | null,
): Family {
  const addresses = master?.addresses ?? [];
  if (master && addresses.length > 0 && addresses.every(isLinkLocalAddress)) {
    // SPEC: 78 at once, not a minute of EINVAL retries at the connect.
    throw new ConfigError(
      `the master ${master.host} (${endpointSource(master)}) resolves only to the link-local ${addresses.join(', ')}, which NCCL, Gloo and torch's store cannot use without a scope: give the master's global address or a name that resolves to one`,
    );
  }
  const family: Family =
    options.family !== 'auto'
      ? options.family
      : addresses[0] !== undefined && familyOf(addresses[0]) === 'ipv6'
        ? 'ipv6'
        : 'ipv4';
  if (master && !addresses.some((address) => familyOf(address) === family)) {
    // Only an explicit --family can disagree with the master (auto follows it).
    const origin = originText(optionOrigin(sources, 'family'));
    throw new ConfigError(
      `${origin}=${options.family} conflicts with the master ${master.host}, which resolves only to ${addresses.join(', ')}; use --family auto or ${family === 'ipv4' ? 'ipv6' : 'ipv4'}`,
    );
  }
  return family;
}
