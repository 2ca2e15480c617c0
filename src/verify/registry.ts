/**
 * The master's registry (SPEC "Verification", peers): every node of the job
 * registers with it, and once all have come each learns who to mesh with.
 * One registry serves one round: `publish` (every node's usable networks,
 * for the agree strategy, answered with the networks all have) or `register`
 * (each node's chosen address and ephemeral port, answered with its roster).
 *
 * Nodes ask again until the answer is final (`retryMs` paces them), so the
 * registry holds no connection open while it waits: 4,096 nodes cost it
 * 4,096 short requests, never 4,096 descriptors. Expected are the job's
 * nnodes nodes, or, with --peers, one node for each entry; a node is known
 * by its rank where it has one, else by its name and the address it came
 * from. Who is missing is said by Slurm name (the node list is in
 * SLURM_NODEID order), --peers entry, or rank.
 */
import { ConfigError } from '../errors.js';
import { canonicalAddress, familyOf, withoutZone } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';
import { spreadMs } from './backoff.js';
import { commonNetworks } from './common-networks.js';
import { FULL_MESH_MAX_NODES, sampledPartners } from './mesh-partners.js';
import type { ResolvedPeer } from './peer-list.js';
import {
  encodeMessage,
  MAX_MISSING_LISTED,
  MAX_NODES,
  type NodeIdentity,
  type Publish,
  type Register,
} from './probe-protocol.js';
import type { RequestHandler } from './probe-service.js';

export type Round = 'publish' | 'register';

/** The registry's bound (probe-protocol.ts MAX_NODES, Slurm's own), checked before anything listens. */
export function checkRegistryBound(job: Pick<JobShape, 'nnodes'>): void {
  if (job.nnodes.max > MAX_NODES) {
    throw new ConfigError(
      `--verify peers checks at most ${MAX_NODES} nodes, and the job has ${job.nnodes.max} (${job.nnodes.source}): use --verify master`,
    );
  }
}
type RequestOf<R extends Round> = R extends 'publish' ? Publish : Register;

export interface RegistryOptions<R extends Round> {
  round: R;
  token: string;
  /** The job's node count (nnodes; its maximum for MIN:MAX). */
  expected: number;
  /** Slurm's node list, which names a missing rank. */
  nodeList: readonly string[];
  /** --peers, resolved: only these nodes take part; null for every node that registers. */
  restrict: readonly ResolvedPeer[] | null;
}

interface Entry<R extends Round> {
  key: string;
  node: NodeIdentity;
  seen: string;
  request: RequestOf<R>;
}

export class Registry<R extends Round> implements RequestHandler {
  private readonly entries = new Map<string, Entry<R>>();
  private readonly ranks = new Set<number>();
  private readonly names = new Set<string>();
  /** --peers matched as nodes register; null without --peers. */
  private readonly peers: PeerMatching<Entry<R>> | null;
  private final: { members: Entry<R>[]; keys: Set<string>; answers: FinalAnswers } | null = null;
  private readonly delivered = new Set<string>();
  /** The current `waiting` answer, rebuilt when a node registers: thousands of nodes ask between changes. */
  private waitingAnswer: Buffer | null = null;
  private resolveDelivered: () => void = () => {};
  /** Every member has been given the final answer. */
  readonly allDelivered: Promise<void>;

  constructor(private readonly options: RegistryOptions<R>) {
    this.peers =
      options.restrict === null ? null : new PeerMatching(options.restrict, this.entries);
    this.allDelivered = new Promise((resolve) => {
      this.resolveDelivered = resolve;
    });
  }

  answer(request: Publish | Register, seen: string): Buffer {
    if (request.kind !== this.options.round) return this.waiting();
    const typed = request as RequestOf<R>;
    const key = typed.node.rank !== null ? `rank ${typed.node.rank}` : `${typed.node.name} ${seen}`;
    const held = this.entries.get(key);
    if (held !== undefined && !sameNode(held, typed, seen)) {
      return reject(
        `${key} is registered already, by ${held.node.name} from ${held.seen}${held.request.kind === 'register' ? ` (${held.request.address})` : ''}: two nodes claim it`,
      );
    }
    if (held === undefined) {
      if (this.final !== null) {
        // --peers left it out: nothing to check from there, which is no failure.
        if (
          this.peers !== null &&
          !this.peers.lists(typed.node.name, [
            seen,
            ...ownAddresses({ key, node: typed.node, seen, request: typed }),
          ])
        ) {
          return this.final.answers.for(key);
        }
        return reject(
          `all ${this.final.members.length} nodes had registered before ${key}: it is not part of this check`,
        );
      }
      const refusal = this.refusal(typed.node);
      if (refusal !== null) return reject(refusal);
      const entry: Entry<R> = { key, node: typed.node, seen, request: typed };
      this.entries.set(key, entry);
      this.peers?.add(entry);
      if (typed.node.rank !== null) this.ranks.add(typed.node.rank);
      this.names.add(shortName(typed.node.name));
      this.waitingAnswer = null;
      this.settle();
    } else if (this.final === null) {
      const before = this.peers === null ? [] : ownAddresses(held);
      held.request = typed;
      // A node may publish other networks when it asks again: they are matched anew.
      if (this.peers !== null && !sameList(before, ownAddresses(held))) this.peers.invalidate();
    }
    if (this.final === null) return this.waiting();
    this.markDelivered(key);
    return this.final.answers.for(key);
  }

  private refusal(node: NodeIdentity): string | null {
    if (this.entries.size >= MAX_NODES) return `the registry holds ${MAX_NODES} nodes, its limit`;
    if (this.options.restrict !== null) return null;
    const { expected } = this.options;
    if (node.rank !== null && node.rank >= expected) {
      return `rank ${node.rank} is outside the job's ${expected} nodes (ranks 0-${expected - 1})`;
    }
    return null;
  }

  private expectedCount(): number {
    return this.options.restrict?.length ?? this.options.expected;
  }

  private memberCount(): number {
    return this.peers === null ? this.entries.size : this.peers.count();
  }

  private settle(): void {
    if (this.memberCount() < this.expectedCount()) return;
    const members = this.peers === null ? [...this.entries.values()] : this.peers.members();
    if (members.length < this.expectedCount()) return;
    const ring = ringOrder(members);
    this.final = {
      members: ring,
      keys: new Set(ring.map((member) => member.key)),
      answers:
        this.options.round === 'publish'
          ? tableAnswers(ring as Entry<'publish'>[], this.options.token)
          : rosterAnswers(ring as Entry<'register'>[], this.options.token),
    };
  }

  private markDelivered(key: string): void {
    if (!this.final?.keys.has(key)) return;
    this.delivered.add(key);
    if (this.delivered.size === this.final.members.length) this.resolveDelivered();
  }

  private waiting(): Buffer {
    this.waitingAnswer ??= this.encodeWaiting();
    return this.waitingAnswer;
  }

  private encodeWaiting(): Buffer {
    const expected = this.expectedCount();
    return encodeMessage({
      kind: 'waiting',
      token: this.options.token,
      round: this.options.round,
      registered: this.final?.members.length ?? this.memberCount(),
      expected,
      missing: this.missing(),
      retryMs: spreadMs(expected),
    });
  }

  /** Who has not come, the first MAX_MISSING_LISTED by name. */
  private missing(): string[] {
    if (this.final !== null) return [];
    if (this.peers !== null) return this.peers.unmatched(MAX_MISSING_LISTED);
    const { expected, nodeList } = this.options;
    const names: string[] = [];
    if (this.ranks.size > 0) {
      for (let rank = 0; rank < expected && names.length < MAX_MISSING_LISTED; rank += 1) {
        if (!this.ranks.has(rank)) names.push(nodeList[rank] ?? `rank ${rank}`);
      }
      return names;
    }
    // Elastic jobs have no ranks yet: the node list's names that have not come.
    for (const listed of nodeList) {
      if (names.length === MAX_MISSING_LISTED) break;
      if (!this.names.has(shortName(listed))) names.push(listed);
    }
    return names;
  }
}

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
class PeerMatching<E extends Entry<Round>> {
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
    const addresses = pass === Pass.Own ? ownAddresses(entry) : [entry.seen];
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

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

/** Final answers by registration key; a node --peers leaves out gets an empty roster. */
interface FinalAnswers {
  for(key: string): Buffer;
}

function tableAnswers(members: Entry<'publish'>[], token: string): FinalAnswers {
  const table = encodeMessage({
    kind: 'table',
    token,
    ...commonNetworks(members.map((member) => member.request.networks)),
  });
  return { for: () => table };
}

/**
 * Each member line encoded once; a full mesh shares one buffer among all,
 * a sampled one gives each node its partners and itself, in ring order.
 */
function rosterAnswers(members: Entry<'register'>[], token: string): FinalAnswers {
  const labels = uniqueLabels(members);
  const lines = members.map((member, index) =>
    encodeMessage({
      kind: 'member',
      name: labels[index] as string,
      rank: member.node.rank,
      interface: member.request.interface,
      address: member.request.address,
      port: member.request.port,
      speedMbps: member.request.speedMbps,
      portRange: member.request.portRange,
    }),
  );
  const indexOf = new Map(members.map((member, index) => [member.key, index]));
  const nodes = members.length;
  const header = (count: number, sampled: boolean) =>
    encodeMessage({ kind: 'roster', token, nodes, sampled, members: count });
  const none = header(0, nodes > FULL_MESH_MAX_NODES);
  if (nodes <= FULL_MESH_MAX_NODES) {
    const everyone = Buffer.concat([header(nodes, false), ...lines]);
    return { for: (key) => (indexOf.has(key) ? everyone : none) };
  }
  const partners = sampledPartners(nodes, seedOf(token));
  return {
    for: (key) => {
      const index = indexOf.get(key);
      if (index === undefined) return none;
      const own = [...(partners[index] ?? []), index].sort((a, b) => a - b);
      return Buffer.concat([header(own.length, true), ...own.map((i) => lines[i] as Buffer)]);
    },
  };
}

/** Ring order: by rank when every member has one (NCCL's ring follows ranks), else by name and address. */
function ringOrder<R extends Round>(members: Entry<R>[]): Entry<R>[] {
  if (members.every((member) => member.node.rank !== null)) {
    return [...members].sort((a, b) => (a.node.rank as number) - (b.node.rank as number));
  }
  return [...members].sort((a, b) =>
    a.node.name === b.node.name ? compare(a.seen, b.seen) : compare(a.node.name, b.node.name),
  );
}

/** Names as the roster shows them: a name two members share gets its rank or address added. */
function uniqueLabels(members: Entry<'register'>[]): string[] {
  const counts = new Map<string, number>();
  for (const member of members)
    counts.set(member.node.name, (counts.get(member.node.name) ?? 0) + 1);
  return members.map(({ node, request }) =>
    (counts.get(node.name) ?? 0) > 1
      ? `${node.name} (${node.rank !== null ? `rank ${node.rank}` : request.address})`
      : node.name,
  );
}

/** The same node asking again (it does until the answer is final), not a second one with its rank. */
function sameNode(held: Entry<Round>, request: Publish | Register, seen: string): boolean {
  if (held.node.name !== request.node.name || held.seen !== seen) return false;
  return (
    held.request.kind !== 'register' ||
    request.kind !== 'register' ||
    (held.request.address === request.address && held.request.port === request.port)
  );
}

function ownAddresses(entry: Entry<Round>): string[] {
  const request = entry.request;
  return request.kind === 'register'
    ? [request.address]
    : request.networks.map((network) => network.address);
}

function shortName(name: string): string {
  return name.split('.')[0] ?? name;
}

function reject(reason: string): Buffer {
  return encodeMessage({ kind: 'reject', reason });
}

function seedOf(token: string): number {
  return Number.parseInt(token.slice(0, 8), 16) >>> 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
