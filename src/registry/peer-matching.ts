/**
 * --peers matched against the registrations as nodes come: the registry's
 * members, where the job restricts the check to a list (SPEC --peers).
 */
import { canonicalAddress, familyOf, withoutZone } from '../host/ip-address.js';
import type { ResolvedPeer } from '../membership/peer-list.js';
import { type Entry, ownAddresses, type Round, shortName } from './entry.js';

/** Which pass matched a --peers entry: none yet, by name, by an address the node holds, by the address it came from. */
const Pass = { None: 0, Name: 1, Own: 2, Seen: 3 } as const;
type Pass = (typeof Pass)[keyof typeof Pass];
const PASSES = [Pass.Name, Pass.Own, Pass.Seen] as const;

/**
 * --peers entries (by index) and the registration each one found: by name
 * first, then by an address the node holds, then by the address it came
 * from (a name's management address, when it registered its data one).
 * Each pass goes through the registrations in the order they came, and each
 * takes the first entry still free that it matches.
 *
 * The list is indexed once, by short name and by address, and a node is
 * matched when it registers, so that counting and naming who is missing
 * cost nothing per request: thousands of nodes register, and every one
 * re-counts. A newcomer comes last in every pass, so the earlier passes'
 * choices stand, and it takes what its own pass leaves; only where that is
 * an entry a later pass gave another node (a name claiming what an address
 * had found) is everything matched again, as it is where a node publishes
 * other networks.
 */
export class PeerMatching<E extends Entry<Round>> {
  /** Peer indices by short name and by address, ascending. */
  private readonly byName = new Map<string, number[]>();
  private readonly byAddress = new Map<string, number[]>();
  private readonly pass: Uint8Array;
  private readonly peerOf = new Map<E, number>();
  /** The matching's order: by pass, then by registration. */
  private order: E[] = [];
  /** Per index group and pass, how far its entries are taken: a pass never takes one back. */
  private readonly cursors = [
    new Map<string, number>(),
    new Map<string, number>(),
    new Map<string, number>(),
  ];
  /** The entries still free, in list order: a linked list (index peers.length is its head). */
  private readonly next: Int32Array;
  private readonly previous: Int32Array;
  private stale = false;

  constructor(
    private readonly peers: readonly ResolvedPeer[],
    private readonly entries: ReadonlyMap<string, E>,
  ) {
    peers.forEach((peer, index) => {
      addTo(this.byName, shortName(peer.name), index);
      for (const address of peer.addresses) {
        const key = addressKey(address);
        if (key !== null) addTo(this.byAddress, key, index);
      }
    });
    this.pass = new Uint8Array(peers.length);
    this.next = new Int32Array(peers.length + 1);
    this.previous = new Int32Array(peers.length + 1);
    this.reset();
  }

  /** A --peers entry names a node by its name (node07, node07.cluster) or by any of its addresses. */
  lists(name: string, addresses: readonly string[]): boolean {
    return (
      this.byName.has(shortName(name)) ||
      addresses.some((address) => {
        const key = addressKey(address);
        return key !== null && this.byAddress.has(key);
      })
    );
  }

  /** A registration that came, last of all. */
  add(entry: E): void {
    if (this.stale) {
      this.rematch();
      return;
    }
    for (const pass of PASSES) {
      const index = this.candidate(pass, entry);
      if (index === -1) continue;
      // Taken by a later pass: that node must look again, and those after it.
      if (this.pass[index] === Pass.None) this.take(index, entry, pass);
      else this.rematch();
      return;
    }
  }

  /** A registration's addresses changed. */
  invalidate(): void {
    this.stale = true;
  }

  count(): number {
    if (this.stale) this.rematch();
    return this.order.length;
  }

  /** The matched registrations, in the matching's order. */
  members(): E[] {
    this.rematch();
    return [...this.order];
  }

  /** The first `limit` entries no node matched, in list order. */
  unmatched(limit: number): string[] {
    if (this.stale) this.rematch();
    const names: string[] = [];
    const head = this.peers.length;
    for (let index = this.next[head] as number; index !== head && names.length < limit; ) {
      names.push((this.peers[index] as ResolvedPeer).name);
      index = this.next[index] as number;
    }
    return names;
  }

  private rematch(): void {
    this.reset();
    for (const pass of PASSES) {
      for (const entry of this.entries.values()) {
        if (this.peerOf.has(entry)) continue;
        const index = this.candidate(pass, entry);
        if (index !== -1) this.take(index, entry, pass);
      }
    }
  }

  private reset(): void {
    this.stale = false;
    this.pass.fill(Pass.None);
    this.peerOf.clear();
    this.order = [];
    for (const cursor of this.cursors) cursor.clear();
    const head = this.peers.length;
    for (let index = 0; index <= head; index += 1) {
      this.next[index] = index === head ? 0 : index + 1;
      this.previous[index] = index === 0 ? head : index - 1;
    }
  }

  /** The first entry `pass` may take for this node, one neither it nor an earlier pass took; -1 for none. */
  private candidate(pass: Pass, entry: E): number {
    const blocked =
      pass === Pass.Seen
        ? (index: number) => this.pass[index] !== Pass.None
        : (index: number) => this.pass[index] !== Pass.None && (this.pass[index] as number) <= pass;
    const cursor = this.cursors[pass - 1] as Map<string, number>;
    if (pass === Pass.Name) return first(this.byName, cursor, shortName(entry.node.name), blocked);
    let best = -1;
    const addresses = pass === Pass.Own ? ownAddresses(entry.request) : [entry.seen];
    for (const address of addresses) {
      const key = addressKey(address);
      if (key === null) continue;
      const index = first(this.byAddress, cursor, key, blocked);
      if (index !== -1 && (best === -1 || index < best)) best = index;
    }
    return best;
  }

  private take(index: number, entry: E, pass: Pass): void {
    this.pass[index] = pass;
    this.peerOf.set(entry, index);
    this.order.push(entry);
    const before = this.previous[index] as number;
    const after = this.next[index] as number;
    this.next[before] = after;
    this.previous[after] = before;
  }
}

/** The first index of `group` not blocked, the group's cursor moved past the blocked ones before it. */
function first(
  groups: ReadonlyMap<string, readonly number[]>,
  cursors: Map<string, number>,
  group: string,
  blocked: (index: number) => boolean,
): number {
  const indices = groups.get(group);
  if (indices === undefined) return -1;
  let at = cursors.get(group) ?? 0;
  while (at < indices.length && blocked(indices[at] as number)) at += 1;
  cursors.set(group, at);
  return at < indices.length ? (indices[at] as number) : -1;
}

function addTo(groups: Map<string, number[]>, group: string, index: number): void {
  const indices = groups.get(group);
  if (indices === undefined) groups.set(group, [index]);
  else if (indices[indices.length - 1] !== index) indices.push(index);
}

/** One spelling for the addresses sameAddress (ip-address.ts) holds the same; null for text that is none. */
function addressKey(address: string): string | null {
  return familyOf(address) === null ? null : canonicalAddress(withoutZone(address));
}
