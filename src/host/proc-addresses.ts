/**
 * Which addresses this host holds, from /proc alone: enough to tell whether a
 * link Node cannot list (not IFF_UP|IFF_RUNNING) holds any, without spawning
 * `ip` (a process costs more than the rest of nccl-run's start-up). Neither
 * file gives what `ip addr` does (IPv4 prefix lengths, owners), so they only
 * decide whether ip is asked.
 *
 * - /proc/net/if_inet6 (net/ipv6/addrconf.c if6_seq_show): every IPv6
 *   address of every link, up or down: address, ifindex, prefix length,
 *   scope, flags, device name.
 * - /proc/net/fib_trie (net/ipv4/fib_trie.c fib_trie_seq_show): the FIB's
 *   leaves, each `|-- A.B.C.D` followed by its aliases `/LEN SCOPE TYPE`.
 *   fib_add_ifaddr adds the `/32 host LOCAL` route of every IPv4 address
 *   when it is added, on a link that is down too, and a link going down
 *   (fib_disable_ip) leaves it: checked here on a veth set up, then down.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from './attempt.js';

export interface ProcAddresses {
  /** Every IPv4 address with a local route (all tables), in the kernel's dotted decimal. */
  ipv4: Set<string>;
  /** The names of the links that hold at least one IPv6 address. */
  ipv6Links: Set<string>;
}

/** null when /proc/net/fib_trie cannot be read (no /proc here): nothing can be told then. */
export function readProcAddresses(procRoot: string): ProcAddresses | null {
  const fibTrie = attempt(() => readFileSync(join(procRoot, 'net/fib_trie'), 'utf8'));
  if (fibTrie === undefined) return null;
  // A kernel without IPv6 has no if_inet6, and no IPv6 address either.
  const ifInet6 = attempt(() => readFileSync(join(procRoot, 'net/if_inet6'), 'utf8')) ?? '';
  return { ipv4: parseFibTrieLocals(fibTrie), ipv6Links: parseIfInet6Links(ifInet6) };
}

export function parseFibTrieLocals(text: string): Set<string> {
  const locals = new Set<string>();
  let leaf: string | null = null;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('|-- ')) leaf = trimmed.slice(4);
    else if (leaf !== null && trimmed.startsWith('/32 host LOCAL')) locals.add(leaf);
  }
  return locals;
}

export function parseIfInet6Links(text: string): Set<string> {
  const links = new Set<string>();
  for (const line of text.split('\n')) {
    const device = line.trim().split(/\s+/)[5];
    if (device !== undefined) links.add(device);
  }
  return links;
}
