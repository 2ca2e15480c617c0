/**
 * Who has registered with the registry: its entries by key, the ranks and
 * names among them, how many count as members, and who is still missing.
 * Expected are the job's nodes, or, with --peers, one node for each entry
 * (matched by peer-matching.ts); a node is known by its rank where it has
 * one, else by its name and the address it came from. Who is missing is
 * said by Slurm name (the node list is in SLURM_NODEID order), --peers
 * entry, or rank.
 */
import type { ResolvedPeer } from '../membership/peer-list.js';
import { MAX_MISSING_LISTED, MAX_NODES, type NodeIdentity } from '../probe/protocol.js';
import { type Entry, ownAddresses, type RequestOf, type Round, shortName } from './entry.js';
import { PeerMatching } from './peer-matching.js';

export interface RegistrationsOptions {
  /** The job's node count (nnodes; its MAX for MIN:MAX). */
  expected: number;
  /** MIN for an elastic job; `expected` (the default) for a fixed one. */
  minimum?: number;
  /** Slurm's node list, which names a missing rank. */
  nodeList: readonly string[];
  /** --peers, resolved: only these nodes take part; null for every node that registers. */
  restrict: readonly ResolvedPeer[] | null;
}

export class Registrations<R extends Round> {
  private readonly entries = new Map<string, Entry<R>>();
  private readonly ranks = new Set<number>();
  private missingRankList: number[] | null = null;
  /** Every rank below it has registered. */
  private missingFloor = 0;
  /** Short names of the entries, counted: two nodes may share one. */
  private readonly names = new Map<string, number>();
  /** --peers matched as nodes register; null without --peers. */
  private readonly peers: PeerMatching<Entry<R>> | null;

  constructor(private readonly options: RegistrationsOptions) {
    this.peers =
      options.restrict === null ? null : new PeerMatching(options.restrict, this.entries);
  }

  /** The entry registered under `key`. */
  get(key: string): Entry<R> | undefined {
    return this.entries.get(key);
  }

  /** `entry` is still the one registered under its key. */
  holds(entry: Entry<R>): boolean {
    return this.entries.get(entry.key) === entry;
  }

  add(entry: Entry<R>): void {
    this.entries.set(entry.key, entry);
    this.peers?.add(entry);
    if (entry.node.rank !== null) {
      this.ranks.add(entry.node.rank);
      this.rankCame(entry.node.rank);
    }
    const short = shortName(entry.node.name);
    this.names.set(short, (this.names.get(short) ?? 0) + 1);
  }

  /** The same node again: a poll, or its rerun (another port) whose entry replaces the stale one. */
  renew(held: Entry<R>, request: RequestOf<R>): void {
    const before = this.peers === null ? [] : ownAddresses(held.request);
    held.request = request;
    if (this.peers !== null && !sameList(before, ownAddresses(held.request))) {
      this.peers.invalidate();
    }
  }

  /** A node gone before the rendezvous completed: its entry goes too. */
  remove(entry: Entry<R>): void {
    this.entries.delete(entry.key);
    if (entry.node.rank !== null) {
      this.ranks.delete(entry.node.rank);
      this.missingRankList = null;
      this.missingFloor = Math.min(this.missingFloor, entry.node.rank);
    }
    const short = shortName(entry.node.name);
    const left = (this.names.get(short) ?? 1) - 1;
    if (left > 0) this.names.set(short, left);
    else this.names.delete(short);
    this.peers?.invalidate();
  }

  /** Why a newcomer is refused; null where it may register. */
  refusal(node: NodeIdentity): string | null {
    if (this.entries.size >= MAX_NODES) return `the registry holds ${MAX_NODES} nodes, its limit`;
    if (this.options.restrict !== null) return null;
    const { expected } = this.options;
    if (node.rank !== null && node.rank >= expected) {
      return `rank ${node.rank} is outside the job's ${expected} nodes (ranks 0-${expected - 1})`;
    }
    return null;
  }

  /** --peers leaves out the node of this name and these addresses (none without --peers). */
  leavesOut(name: string, addresses: readonly string[]): boolean {
    return this.peers !== null && !this.peers.lists(name, addresses);
  }

  expectedCount(): number {
    return this.options.restrict?.length ?? this.options.expected;
  }

  minimumCount(): number {
    return Math.min(this.options.minimum ?? this.options.expected, this.expectedCount());
  }

  /** MIN members are there: an elastic job's last call may start, or go on. */
  reachedMinimum(): boolean {
    return this.memberCount() >= this.minimumCount();
  }

  memberCount(): number {
    return this.peers === null ? this.entries.size : this.peers.count();
  }

  /** The members as of now: every entry, or those --peers matched. */
  members(): Entry<R>[] {
    return this.peers === null ? [...this.entries.values()] : this.peers.members();
  }

  /** Who has not come, the first MAX_MISSING_LISTED by name. */
  missing(): string[] {
    if (this.peers !== null) return this.peers.unmatched(MAX_MISSING_LISTED);
    const { nodeList } = this.options;
    const names: string[] = [];
    if (this.ranks.size > 0) {
      return this.missingRanks().map((rank) => nodeList[rank] ?? `rank ${rank}`);
    }
    // Elastic jobs have no ranks yet: the node list's names that have not come.
    for (const listed of nodeList) {
      if (names.length === MAX_MISSING_LISTED) break;
      if (!this.names.has(shortName(listed))) names.push(listed);
    }
    return names;
  }

  /**
   * The first MAX_MISSING_LISTED ranks not registered, kept between
   * registrations: a walk over every rank per registration would be
   * quadratic in the nodes, and only a rank at or before the last one
   * listed changes the list.
   */
  private missingRanks(): number[] {
    if (this.missingRankList !== null) return this.missingRankList;
    const { expected } = this.options;
    while (this.missingFloor < expected && this.ranks.has(this.missingFloor))
      this.missingFloor += 1;
    const list: number[] = [];
    for (
      let rank = this.missingFloor;
      rank < expected && list.length < MAX_MISSING_LISTED;
      rank += 1
    ) {
      if (!this.ranks.has(rank)) list.push(rank);
    }
    this.missingRankList = list;
    return list;
  }

  private rankCame(rank: number): void {
    const list = this.missingRankList;
    if (list === null) return;
    const last = list.at(-1);
    if (list.length === MAX_MISSING_LISTED && last !== undefined && rank > last) return;
    this.missingRankList = null;
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}
