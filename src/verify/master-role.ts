/**
 * Which side of the rendezvous this node is on. The node whose addresses
 * include the endpoint's runs torchrun's TCPStore: c10d's
 * `_matches_machine_hostname` (torch/distributed/elastic/rendezvous/utils.py)
 * compares the endpoint with this machine's names and addresses; for the
 * static backend, rank 0 hosts the store whatever address the others dial.
 */
import { UnresolvableMasterError } from '../errors.js';
import type { Family, HostFacts } from '../host/host-facts.js';
import { familyOf, isLoopbackAddress } from '../host/ip-address.js';
import type { JobShape, RendezvousEndpoint } from '../job/job-shape.js';

export type MasterRole =
  /** This node runs the store: bind-check `address` (null: only the wildcard, see below). */
  | { role: 'store host'; address: string | null; warning: string | null }
  | { role: 'worker'; address: string };

export async function masterRole(
  job: JobShape,
  master: RendezvousEndpoint,
  resolved: readonly string[],
  facts: HostFacts,
  family: Family,
): Promise<MasterRole> {
  const all = resolved;
  const wanted = all.filter((address) => familyOf(address) === family);
  const [first] = wanted;
  if (first === undefined) {
    throw new UnresolvableMasterError(
      `the master ${master.host} has no ${family} address (it resolves to ${all.join(', ') || 'nothing'})`,
    );
  }
  const own = new Set(
    facts.interfaces.flatMap((iface) => iface.addresses.map((entry) => entry.address)),
  );
  // Like _matches_machine_hostname, any loopback address is this machine.
  const ownMaster = wanted.find((address) => own.has(address) || isLoopbackAddress(address));
  if (ownMaster !== undefined) return { role: 'store host', address: ownMaster, warning: null };
  if (job.rdzvBackend === 'static' && job.nodeRank?.value === 0) {
    return {
      role: 'store host',
      address: null,
      warning: `this node has rank 0 and will host torchrun's store, but the master address ${master.host} (${wanted.join(', ')}) is not one of its addresses: workers will dial another host unless it forwards (a Kubernetes service does)`,
    };
  }
  return { role: 'worker', address: first };
}
