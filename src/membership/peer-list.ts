/**
 * `--peers` as the registry matches it (SPEC: "--peers restricts the set"):
 * each entry with the addresses it resolves to, so that a node registering
 * as node07, from 198.18.10.7 or with that chosen address, is the entry
 * node07, node07.cluster or 198.18.10.7. An entry that does not resolve is
 * kept by its name alone: the node may register under it, and if none
 * does, the wait names it as missing.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Family } from '../host/host-facts.js';

export interface ResolvedPeer {
  name: string;
  addresses: string[];
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
      const found = await lookup(name, { all: true, family: wanted }).catch(() => []);
      return { name, addresses: found.map((entry) => entry.address) };
    }),
  );
}
