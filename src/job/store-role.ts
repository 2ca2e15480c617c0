/**
 * Which side of the rendezvous store this node is on, by torch's own rule,
 * never by whose address the endpoint is:
 *
 * - static backend: node rank 0 hosts the TCPStore and every other rank is
 *   a client, whatever address they dial (static_tcp_rendezvous.py
 *   `next_rendezvous`: `is_master = self.rank == 0`, 1.13 and 2.6). So a
 *   worker whose /etc/hosts maps the master's name to 127.0.1.1 is a client
 *   of a store that is not there, and rank 1 on the master's own host is a
 *   client of rank 0's store, not a second host of the port;
 * - c10d: `--rdzv-conf is_host` if given, else `_matches_machine_hostname`
 *   (torch/store-host-rule.ts), where torch 2.x hosts in every case 1.13 does
 *   and more: the role follows 2.x, the product's torch, and the warning
 *   that c10dStoreHostWarning gives names the 1.13 difference;
 * - any other backend (etcd): the store is a service of its own, which every
 *   node reaches as a client.
 */

import { isIP } from 'node:net';
import { UnresolvableMasterError } from '../errors.js';
import type { Family, HostFacts } from '../host/host-facts.js';
import { familyOf, interfaceHolding, isLoopbackAddress } from '../host/ip-address.js';
import { NEWEST_TORCH, rulesFor } from '../torch/release-for.js';
import { TORCH_RELEASES, type TorchRelease } from '../torch/releases.js';
import {
  hostsStore,
  type MachineNames,
  matchesMachineHostname,
  storeHostMatch,
} from '../torch/store-host-rule.js';
import { versionParts } from '../version-order.js';
import type { JobShape, RendezvousEndpoint } from './job-shape.js';

/** The role follows the newest torch's rule, the one current images ship (see above). */

export type StoreRole =
  /**
   * This node runs the store: bind-check `address` (null: only the
   * wildcard). `clientIfTaken`: where torch inferred the role, it becomes a
   * client of this address instead when the port is taken
   * (c10d_rendezvous_backend.py `_create_tcp_store`: `for is_server in
   * [is_host, False]`), as the second agent of a job on one host does; null
   * where the role is not torch's guess.
   */
  | {
      role: 'store host';
      address: string | null;
      warning: string | null;
      clientIfTaken: string | null;
    }
  | { role: 'worker'; address: string };

export async function storeRole(
  job: JobShape,
  master: RendezvousEndpoint,
  resolved: readonly string[],
  facts: HostFacts,
  family: Family,
): Promise<StoreRole> {
  const wanted = resolved.filter((address) => familyOf(address) === family);
  const [first] = wanted;
  if (first === undefined) {
    throw new UnresolvableMasterError(
      `the master ${master.host} has no ${family} address (it resolves to ${resolved.join(', ') || 'nothing'})`,
    );
  }
  const worker: StoreRole = { role: 'worker', address: first };
  // The store binds the wildcard; the endpoint's own address is bound first
  // when it is this node's, so a failure names the address workers dial.
  const ownMaster =
    wanted.find(
      (address) =>
        isLoopbackAddress(address) || interfaceHolding(facts.interfaces, address) !== undefined,
    ) ?? null;

  const notOurs =
    ownMaster === null
      ? `the master address ${master.host} (${wanted.join(', ')}) is not one of its addresses: the other nodes will dial another host unless it forwards (a Kubernetes service does)`
      : null;
  if (job.rdzvBackend === 'static') {
    if (job.nodeRank?.value !== 0) return worker;
    return {
      role: 'store host',
      address: ownMaster,
      clientIfTaken: null,
      warning: notOurs && `this node has rank 0 and will host torchrun's store, but ${notOurs}`,
    };
  }
  if (job.rdzvBackend !== 'c10d') return worker;
  const hosts =
    job.isHost ??
    hostsStore(await storeHostMatch(master.host, resolved, facts.hostname), NEWEST_TORCH);
  if (!hosts) return worker;
  return {
    role: 'store host',
    address: ownMaster,
    clientIfTaken: job.isHost === null ? first : null,
    warning: notOurs && `this node will host torchrun's c10d store, but ${notOurs}`,
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
 * say. machine: what plan/plan.ts looked up for storeHostQuestion's endpoint.
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
  const match = matchesMachineHostname(endpoint, endpointAddresses, machine);
  // An unknown torch is judged by the newest record's rule; the plan's one
  // warning for an unknown torch names what an older one would do.
  const release = rulesFor(torch);
  if (hostsStore(match, release)) return null;
  const byAddress = rulesLabel(TORCH_RELEASES.filter((r) => r.storeHostByAddress));
  const fix = 'add --rdzv-conf is_host=1 on this node';
  const stall = 'no node would host it and the rendezvous would wait until it times out';
  const subject =
    isIP(endpoint) !== 0
      ? `the c10d endpoint ${endpoint} is this node's address`
      : `the c10d endpoint ${endpoint} resolves to this node's address ${own}`;
  if (match.byAddress) {
    return `${subject}, one its hostname ${facts.hostname} resolves to, but torch ${torch} compares a name only with the hostname and its canonical name (torch ${byAddress} would host the store here), so ${stall}; ${fix}`;
  }
  const resolved = match.hostnameAddresses.join(', ') || 'nothing';
  const byName = release.storeHostByAddress ? ' or a name resolving to one of those' : '';
  const who = torch === null ? 'torchrun' : `torch ${torch}'s torchrun`;
  return `${subject}, but ${who} hosts the store only at localhost, the hostname ${facts.hostname}, its canonical name, an address it resolves to (${resolved})${byName}: ${stall}; ${fix}`;
}

/** The releases of one rule as messages name them: `1.13`, or `2.x` for several of one major. */
function rulesLabel(releases: readonly TorchRelease[]): string {
  const majors = new Set(releases.map((r) => versionParts(r.version)[0]));
  const [only] = releases;
  if (releases.length === 1 && only !== undefined) return only.version;
  return majors.size === 1 ? `${[...majors][0]}.x` : releases.map((r) => r.version).join(', ');
}
