/**
 * Turns `--peers` (or Slurm's node list) into addresses, and finds this node
 * in it. A node recognises itself by its own addresses, not by hostname:
 * the same machine is `node07`, `node07.cluster` and 198.18.10.7 in
 * different lists, and its hostname may resolve to another network.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ConfigError } from '../errors.js';
import type { Family, HostFacts, InterfaceFacts } from '../host/host-facts.js';
import { prefixContains } from '../host/ip-address.js';

export interface ResolvedPeer {
  name: string;
  addresses: string[];
}

export interface PeerPlan {
  /** This node's entry in the list. */
  self: string;
  /** Every other node, with the one address we dial. */
  others: { name: string; address: string }[];
}

/** dns.lookup reads /etc/hosts and NSS as torch and Slurm's tools do; IP literals pass through. */
export async function resolvePeers(
  names: readonly string[],
  family: Family,
): Promise<ResolvedPeer[]> {
  const wanted = family === 'ipv6' ? 6 : 4;
  return Promise.all(
    names.map(async (name) => {
      if (isIP(name) !== 0) return { name, addresses: isIP(name) === wanted ? [name] : [] };
      try {
        const found = await lookup(name, { all: true, family: wanted });
        return { name, addresses: found.map((entry) => entry.address) };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? String(error);
        throw new ConfigError(
          `--peers entry "${name}" does not resolve to an ${family} address (${code})`,
        );
      }
    }),
  );
}

export function planPeers(
  peers: readonly ResolvedPeer[],
  facts: HostFacts,
  chosen: InterfaceFacts,
): PeerPlan {
  const own = new Set(
    facts.interfaces.flatMap((iface) => iface.addresses.map((entry) => entry.address)),
  );
  const isSelf = (peer: ResolvedPeer) => peer.addresses.some((address) => own.has(address));
  const self = peers.find(isSelf);
  if (self === undefined) {
    throw new ConfigError(
      `the peer list (${peers.map((peer) => peer.name).join(', ')}) does not name this host: none of its entries resolves to one of this host's addresses (${[...own].join(', ')})`,
    );
  }
  const others = peers
    .filter((peer) => !isSelf(peer))
    .map((peer) => {
      const [first] = peer.addresses;
      if (first === undefined) {
        throw new ConfigError(`--peers entry "${peer.name}" has no address of the chosen family`);
      }
      // A name may resolve into several networks; the one on our link is where NCCL will talk.
      const onLink = peer.addresses.find((a) =>
        chosen.addresses.some((held) => prefixContains(held.address, held.prefixLength, a)),
      );
      return { name: peer.name, address: onLink ?? first };
    });
  return { self: self.name, others: dedupe(others) };
}

/** The same host listed twice (a name and its address) is probed once. */
function dedupe(others: { name: string; address: string }[]): { name: string; address: string }[] {
  const byAddress = new Map<string, { name: string; address: string }>();
  for (const peer of others) if (!byAddress.has(peer.address)) byAddress.set(peer.address, peer);
  return [...byAddress.values()];
}
