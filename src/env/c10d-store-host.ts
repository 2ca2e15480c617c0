/**
 * A c10d job whose endpoint is this node's address, but not one its hostname
 * resolves to. torchrun decides who hosts the store with
 * `_matches_machine_hostname` (torch/distributed/elastic/rendezvous/utils.py):
 * the endpoint must be localhost, a loopback address, the hostname, or an
 * address that getaddrinfo(hostname) returns. On a host whose hostname
 * resolves to the management network and whose endpoint is given on the data
 * network, no node hosts the store and every node waits for it until the
 * rendezvous times out. `--rdzv-conf is_host=1` on the master settles it.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { HostFacts } from '../host/host-facts.js';
import { isLoopbackAddress, sameAddress } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';

export async function c10dStoreHostWarning(
  job: JobShape,
  facts: HostFacts,
): Promise<string | null> {
  const endpoint = job.master?.host;
  if (job.rdzvBackend !== 'c10d' || endpoint === undefined || job.isHost !== null) return null;
  // Only an address literal of this node's own is the trap; names torch compares by name.
  if (isIP(endpoint) === 0 || isLoopbackAddress(endpoint)) return null;
  const own = facts.interfaces.some((iface) =>
    iface.addresses.some((held) => sameAddress(held.address, endpoint)),
  );
  if (!own) return null;
  let hostnameAddresses: string[];
  try {
    hostnameAddresses = (await lookup(facts.hostname, { all: true })).map((entry) => entry.address);
  } catch {
    hostnameAddresses = [];
  }
  if (hostnameAddresses.some((address) => sameAddress(address, endpoint))) return null;
  return `the c10d endpoint ${endpoint} is this node's address, but torchrun only hosts the store on an address its hostname ${facts.hostname} resolves to (${hostnameAddresses.join(', ') || 'none'}): no node would host it and the rendezvous would wait until it times out; add --rdzv-conf is_host=1 on this node`;
}
