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
 *   (env/c10d-store-host.ts), where torch 2.x hosts in every case 1.13 does
 *   and more: the role follows 2.x, the product's torch, and the warning
 *   that c10dStoreHostWarning gives names the 1.13 difference;
 * - any other backend (etcd): the store is a service of its own, which every
 *   node reaches as a client.
 */
import { storeHostRule } from '../env/c10d-store-host.js';
import { UnresolvableMasterError } from '../errors.js';
import type { Family, HostFacts } from '../host/host-facts.js';
import { familyOf, interfaceHolding, isLoopbackAddress } from '../host/ip-address.js';
import type { JobShape, RendezvousEndpoint } from './job-shape.js';

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
  const hosts = job.isHost ?? (await storeHostRule(master.host, resolved, facts.hostname)).torch2;
  if (!hosts) return worker;
  return {
    role: 'store host',
    address: ownMaster,
    clientIfTaken: job.isHost === null ? first : null,
    warning: notOurs && `this node will host torchrun's c10d store, but ${notOurs}`,
  };
}
