/**
 * The master's registry (SPEC "Verification", peers): every node of the job
 * registers with it, and once the rendezvous is complete each learns who to
 * mesh with. One registry serves one round: `publish` (every node's usable
 * networks, for the agree strategy, answered with the networks all have) or
 * `register` (each node's chosen address and ephemeral port, answered with
 * its roster).
 *
 * Completion follows torch's c10d rendezvous (dynamic_rendezvous.py,
 * v2.6.0 `_RendezvousJoinOp`, `_add_to_participants`): at MAX nodes at
 * once; for an elastic --nnodes MIN:MAX, when the MIN-th node comes a last
 * call of `lastCallMs` starts (last_call_timeout, 30 s by default; later
 * nodes do not extend it), and at its end the rendezvous completes with
 * whoever came. A node that comes after completion, or registers again
 * (a requeue, a pod restart), is answered from the completed roster as not
 * part of it, as torch puts it on the wait list for the next round.
 *
 * Each node's connection is held while it waits, and the answer pushed on
 * it when final: no polling, and a node that goes before then (its check
 * killed) takes its entry with it, so a rerun is not "a second node with
 * its rank". A held node hears the count at once in a small job, with the
 * next push in a large one; the final answers go out a batch per turn of
 * the event loop, the registry host's own and its partners' first, so that
 * its mesh runs while the rest are written. A registration from the same
 * name, source and address as a held entry replaces it. Past
 * `holdCapacity` connections (the descriptor limit) nodes are told to ask
 * again instead. Expected are the job's nodes,
 * or, with --peers, one node for each entry; a node is known by its rank
 * where it has one, else by its name and the address it came from. Who is
 * missing is said by Slurm name (the node list is in SLURM_NODEID order),
 * --peers entry, or rank.
 */
import { ConfigError } from '../errors.js';
import { canonicalAddress, familyOf, withoutZone } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';
import { spreadMs } from '../reach/backoff.js';
import type { Admission } from './admission.js';
import { commonNetworks } from './common-networks.js';
import { FULL_MESH_MAX_NODES, sampledPartners } from './partners.js';
import type { ResolvedPeer } from './peer-list.js';
import {
  type EncodedMember,
  encodeMember,
  encodeMessage,
  MAX_MISSING_LISTED,
  MAX_NODES,
  type NodeIdentity,
  type Publish,
  type Register,
  rosterEncoder,
} from './protocol.js';
import type { RegistryConnection, RequestHandler } from './service.js';

export type Round = 'publish' | 'register';

/** The registry's bound (protocol.ts MAX_NODES, Slurm's own), checked before anything listens. */
export function checkRegistryBound(job: Pick<JobShape, 'nnodes'>): void {
  if (job.nnodes.max > MAX_NODES) {
    throw new ConfigError(
      `--verify peers checks at most ${MAX_NODES} nodes, and the job has ${job.nnodes.max} (${job.nnodes.origin.name}): use --verify master`,
    );
  }
}
type RequestOf<R extends Round> = R extends 'publish' ? Publish : Register;

/**
 * How soon after a node comes or goes the nodes the registry holds hear the
 * new count: at once for a small job; for a large one, whose count moves
 * with every registration, twice per progress line of theirs
 * (PROGRESS_EVERY_MS, 5 s), not thousands of writes a second.
 */
const PUSH_AFTER_MS = { small: 100, large: 2_500 } as const;
/** From this many nodes on, the `waiting` answer is re-encoded at most every RECOUNT_MS. */
const RECOUNT_NODES = 1_024;
const RECOUNT_MS = 100;
/** Final answers written per turn of the event loop (some 20 ms of writes); a full mesh's all at once. */
const DELIVERY_BATCH = FULL_MESH_MAX_NODES;

export interface RegistryOptions<R extends Round> {
  round: R;
  token: string;
  /** The job's node count (nnodes; its MAX for MIN:MAX). */
  expected: number;
  /** MIN for an elastic job; `expected` (the default) for a fixed one. */
  minimum?: number;
  /** The last call once MIN nodes are there; null (the default): complete only at `expected`. */
  lastCallMs?: number | null;
  /** Slurm's node list, which names a missing rank. */
  nodeList: readonly string[];
  /** --peers, resolved: only these nodes take part; null for every node that registers. */
  restrict: readonly ResolvedPeer[] | null;
  /** Connections held open while their nodes wait (the rest poll); unbounded by default. */
  holdCapacity?: number;
  /** What a registration must prove (admission.ts); none: every registration of the job is taken. */
  admission?: Admission;
}

/** How the rendezvous completed: every expected node came, or MIN and the last call ran out. */
export type Completion = 'all' | 'last call';

interface Entry<R extends Round> {
  key: string;
  node: NodeIdentity;
  seen: string;
  request: RequestOf<R>;
  /** The node's connection while the registry holds it. */
  connection: RegistryConnection | null;
  /** The last `waiting` written on that connection. */
  told: Buffer | null;
}

export class Registry<R extends Round> implements RequestHandler {
  private readonly entries = new Map<string, Entry<R>>();
  private readonly ranks = new Set<number>();
  private missingRankList: number[] | null = null;
  /** Every rank below it has registered. */
  private missingFloor = 0;
  /** Short names of the entries, counted: two nodes may share one. */
  private readonly names = new Map<string, number>();
  /** --peers matched as nodes register; null without --peers. */
  private readonly peers: PeerMatching<Entry<R>> | null;
  private final: {
    members: Entry<R>[];
    keys: Set<string>;
    answers: FinalAnswers;
    completion: Completion;
  } | null = null;
  private readonly delivered = new Set<string>();
  private readonly held = new Set<Entry<R>>();
  /** The current `waiting` answers (held, polled), rebuilt when a node comes or goes. */
  private waitingAnswers: { readonly held: Buffer; readonly polled: Buffer } | null = null;
  private waitingStale = true;
  private waitingAt = 0;
  private lastCall: { timer: NodeJS.Timeout; endsAt: number } | null = null;
  private pushTimer: NodeJS.Timeout | null = null;
  private resolveDelivered: () => void = () => {};
  private resolveFinal: () => void = () => {};
  /** Every member has been given the final answer. */
  readonly allDelivered: Promise<void>;
  /** The rendezvous is complete. */
  readonly completed: Promise<void>;

  constructor(private readonly options: RegistryOptions<R>) {
    this.peers =
      options.restrict === null ? null : new PeerMatching(options.restrict, this.entries);
    this.allDelivered = new Promise((resolve) => {
      this.resolveDelivered = resolve;
    });
    this.completed = new Promise((resolve) => {
      this.resolveFinal = resolve;
    });
  }

  /** Who came and how the rendezvous completed; null before it has. */
  get outcome(): { nodes: number; expected: number; completion: Completion } | null {
    if (this.final === null) return null;
    return {
      nodes: this.final.members.length,
      expected: this.expectedCount(),
      completion: this.final.completion,
    };
  }

  /** The `waiting` answer as of now, for the master's own join (join.ts joinLocally). */
  waitingNow(): Buffer {
    return this.waiting().held;
  }

  /** Stops the timers; held connections close with the service. */
  close(): void {
    if (this.pushTimer !== null) clearTimeout(this.pushTimer);
    this.pushTimer = null;
    if (this.lastCall !== null) clearTimeout(this.lastCall.timer);
    this.lastCall = null;
  }

  /** One request answered at once, never held: the polling form of serve(), for a registry whose admission proves nothing asynchronously. */
  answer(request: Publish | Register, seen: string): Buffer {
    let answer: Buffer | null = null;
    this.serve(
      request,
      seen,
      {
        update: () => {},
        finish: (bytes) => {
          answer = bytes;
        },
        onGone: () => {},
      },
      false,
    );
    return answer as unknown as Buffer;
  }

  serve(
    request: Publish | Register,
    seen: string,
    connection: RegistryConnection,
    hold = true,
  ): void {
    if (request.kind !== this.options.round) {
      connection.finish(this.waiting().polled);
      return;
    }
    const verdict =
      request.kind === 'register' ? this.options.admission?.check(request, seen) : undefined;
    if (verdict instanceof Promise) {
      // A node gone while its claim was proved leaves nothing behind.
      let gone = false;
      connection.onGone(() => {
        gone = true;
      });
      verdict.then(
        (proved) => {
          if (!gone && proved.ok) this.enter(request as RequestOf<R>, seen, connection, hold);
          else if (!gone && !proved.ok) connection.finish(reject(proved.reason));
        },
        () => connection.finish(reject('the registry could not check this registration')),
      );
      return;
    }
    if (verdict?.ok === false) {
      connection.finish(reject(verdict.reason));
      return;
    }
    this.enter(request as RequestOf<R>, seen, connection, hold);
  }

  /** An admitted request of this round. */
  private enter(
    typed: RequestOf<R>,
    seen: string,
    connection: RegistryConnection,
    hold: boolean,
  ): void {
    const key = typed.node.rank !== null ? `rank ${typed.node.rank}` : `${typed.node.name} ${seen}`;
    const held = this.entries.get(key);
    if (held !== undefined && !sameMachine(held, typed, seen)) {
      connection.finish(
        reject(
          `${key} is registered already, by ${held.node.name} from ${held.seen}${held.request.kind === 'register' ? ` (${held.request.address})` : ''}: two nodes claim it`,
        ),
      );
      return;
    }
    if (this.final !== null) {
      connection.finish(this.afterCompletion(key, typed, seen, held));
      return;
    }
    let entry: Entry<R>;
    if (held === undefined) {
      const refusal = this.refusal(typed.node);
      if (refusal !== null) {
        connection.finish(reject(refusal));
        return;
      }
      entry = { key, node: typed.node, seen, request: typed, connection: null, told: null };
      this.add(entry);
    } else {
      entry = held;
      // The same node again: a poll, or its rerun (another port) whose entry replaces the stale one.
      const before = this.peers === null ? [] : ownAddresses(held);
      held.request = typed;
      if (this.peers !== null && !sameList(before, ownAddresses(held))) this.peers.invalidate();
      const stale = held.connection;
      if (stale !== null && stale !== connection) {
        held.connection = null;
        this.held.delete(held);
        stale.finish(reject(`${key} registered again from ${seen}: this registration is replaced`));
      }
      this.changed();
    }
    this.settle();
    const final = this.final as Registry<R>['final'];
    if (final !== null) {
      this.markDelivered(key);
      connection.finish(final.answers.for(key));
      return;
    }
    const capacity = this.options.holdCapacity ?? Number.POSITIVE_INFINITY;
    if (!hold || (entry.connection === null && this.held.size >= capacity)) {
      connection.finish(this.waiting().polled);
      return;
    }
    entry.connection = connection;
    entry.told = null;
    this.held.add(entry);
    connection.onGone(() => this.gone(entry, connection));
    // A large job's nodes hear they are held with the next push (within
    // PUSH_AFTER_MS.large, well inside the node's attempt of ATTEMPT_MS), and
    // those that come in the last seconds only with their roster: thousands
    // of `waiting` writes at once were a fifth of the master's CPU.
    if (this.expectedCount() < RECOUNT_NODES) this.tell(entry);
  }

  /**
   * A registration once the roster is final: a member asking again gets its
   * roster; anyone else, a newcomer or a member's rerun from another port
   * (the roster the others have names the old one), is late.
   */
  private afterCompletion(
    key: string,
    request: RequestOf<R>,
    seen: string,
    held: Entry<R> | undefined,
  ): Buffer {
    const final = this.final as NonNullable<Registry<R>['final']>;
    if (held !== undefined && final.keys.has(key) && sameRegistration(held, request)) {
      this.markDelivered(key);
      return final.answers.for(key);
    }
    // --peers left it out: nothing to check from there, which is no failure.
    const probe = { key, node: request.node, seen, request, connection: null, told: null };
    if (
      this.peers !== null &&
      !this.peers.lists(request.node.name, [seen, ...ownAddresses(probe)])
    ) {
      return final.answers.for(key);
    }
    return final.answers.late;
  }

  private add(entry: Entry<R>): void {
    this.entries.set(entry.key, entry);
    this.peers?.add(entry);
    if (entry.node.rank !== null) {
      this.ranks.add(entry.node.rank);
      this.rankCame(entry.node.rank);
    }
    const short = shortName(entry.node.name);
    this.names.set(short, (this.names.get(short) ?? 0) + 1);
    this.changed();
  }

  /** A held node went before the rendezvous completed (its check was killed, or gave up): its entry goes too. */
  private gone(entry: Entry<R>, connection: RegistryConnection): void {
    if (entry.connection !== connection) return;
    entry.connection = null;
    this.held.delete(entry);
    if (this.final !== null || this.entries.get(entry.key) !== entry) return;
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
    this.changed();
    // torch clears the last call's deadline when the participants fall below MIN.
    if (this.lastCall !== null && this.memberCount() < this.minimumCount()) {
      clearTimeout(this.lastCall.timer);
      this.lastCall = null;
    }
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

  private minimumCount(): number {
    return Math.min(this.options.minimum ?? this.options.expected, this.expectedCount());
  }

  private memberCount(): number {
    return this.peers === null ? this.entries.size : this.peers.count();
  }

  private settle(): void {
    const count = this.memberCount();
    if (count >= this.expectedCount()) {
      this.complete('all');
      return;
    }
    const lastCallMs = this.options.lastCallMs ?? null;
    if (lastCallMs === null || count < this.minimumCount() || this.lastCall !== null) return;
    const timer = setTimeout(() => {
      this.lastCall = null;
      if (this.final === null && this.memberCount() >= this.minimumCount()) {
        this.complete('last call');
      }
    }, lastCallMs);
    this.lastCall = { timer, endsAt: performance.now() + lastCallMs };
    this.changed();
  }

  private complete(completion: Completion): void {
    const members = this.peers === null ? [...this.entries.values()] : this.peers.members();
    if (completion === 'all' && members.length < this.expectedCount()) return;
    if (this.lastCall !== null) clearTimeout(this.lastCall.timer);
    this.lastCall = null;
    const ring = ringOrder(members);
    const shape = { expected: this.expectedCount(), token: this.options.token };
    this.final = {
      members: ring,
      keys: new Set(ring.map((member) => member.key)),
      answers:
        this.options.round === 'publish'
          ? tableAnswers(ring as Entry<'publish'>[], shape)
          : rosterAnswers(ring as Entry<'register'>[], shape),
      completion,
    };
    this.resolveFinal();
    if (ring.length === 0) this.resolveDelivered();
    this.deliver(this.deliveryOrder(this.final.answers), 0);
  }

  /**
   * The registry host's own node first (in-process, nothing to write), then
   * its partners, whose dials its mesh waits for, then everyone else: the
   * host's mesh starts while the other rosters are still being written.
   */
  private deliveryOrder(answers: FinalAnswers): Entry<R>[] {
    const held = [...this.held];
    const local = held.find((entry) => entry.connection?.local === true);
    if (local === undefined) return held;
    const partners = new Set(answers.partners(local.key));
    const rest = held.filter((entry) => entry !== local);
    return [
      local,
      ...rest.filter((entry) => partners.has(entry.key)),
      ...rest.filter((entry) => !partners.has(entry.key)),
    ];
  }

  /** DELIVERY_BATCH final answers, then the next batch on the event loop's next turn. */
  private deliver(entries: readonly Entry<R>[], from: number): void {
    const final = this.final as NonNullable<Registry<R>['final']>;
    const end = Math.min(entries.length, from + DELIVERY_BATCH);
    for (let index = from; index < end; index += 1) {
      const entry = entries[index] as Entry<R>;
      const connection = entry.connection;
      // Gone, or answered on a new connection meanwhile.
      if (connection === null) continue;
      entry.connection = null;
      this.held.delete(entry);
      this.markDelivered(entry.key);
      connection.finish(final.answers.for(entry.key));
    }
    if (end < entries.length) setImmediate(() => this.deliver(entries, end));
  }

  private markDelivered(key: string): void {
    if (!this.final?.keys.has(key)) return;
    this.delivered.add(key);
    if (this.delivered.size === this.final.members.length) this.resolveDelivered();
  }

  /** The count changed: the waiting answer is stale, and the held nodes hear of it soon. */
  private changed(): void {
    this.waitingStale = true;
    if (this.pushTimer !== null || this.final !== null) return;
    const after = this.expectedCount() < RECOUNT_NODES ? PUSH_AFTER_MS.small : PUSH_AFTER_MS.large;
    this.pushTimer = setTimeout(() => {
      this.pushTimer = null;
      this.pushProgress();
    }, after);
    this.pushTimer.unref();
  }

  private pushProgress(): void {
    if (this.final !== null) return;
    for (const entry of this.held) this.tell(entry);
  }

  /** The current `waiting`, to a held node that has not heard it. */
  private tell(entry: Entry<R>): void {
    const { held } = this.waiting();
    if (entry.told === held) return;
    entry.told = held;
    entry.connection?.update(held);
  }

  /** Each form encoded when first asked for after a change: thousands of nodes ask between changes. */
  private waiting(): { readonly held: Buffer; readonly polled: Buffer } {
    const now = performance.now();
    // A large job's count moves with every registration: it is re-said every so often, not each time.
    const throttled = this.expectedCount() >= RECOUNT_NODES && now - this.waitingAt < RECOUNT_MS;
    if (this.waitingAnswers === null || (this.waitingStale && !throttled)) {
      this.waitingStale = false;
      this.waitingAt = now;
      const encoded = new Map<boolean, Buffer>();
      const form = (held: boolean): Buffer => {
        const known = encoded.get(held);
        if (known !== undefined) return known;
        const bytes = this.encodeWaiting(held);
        encoded.set(held, bytes);
        return bytes;
      };
      this.waitingAnswers = {
        get held() {
          return form(true);
        },
        get polled() {
          return form(false);
        },
      };
    }
    return this.waitingAnswers;
  }

  private encodeWaiting(held: boolean): Buffer {
    const expected = this.expectedCount();
    return encodeMessage({
      kind: 'waiting',
      token: this.options.token,
      round: this.options.round,
      registered: this.final?.members.length ?? this.memberCount(),
      expected,
      minimum: this.minimumCount(),
      lastCallMs:
        this.lastCall === null
          ? null
          : Math.max(0, Math.round(this.lastCall.endsAt - performance.now())),
      missing: this.missing(),
      held,
      retryMs: spreadMs(expected),
    });
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

  /** Who has not come, the first MAX_MISSING_LISTED by name. */
  private missing(): string[] {
    if (this.final !== null) return [];
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

/** Final answers by registration key; a node --peers leaves out gets an empty roster, a late one a late one. */
interface FinalAnswers {
  for(key: string): Buffer;
  late: Buffer;
  /** The keys a member meshes with, where its roster is a sample; none otherwise (a full mesh is one DELIVERY_BATCH). */
  partners(key: string): string[];
}

interface RosterShape {
  /** The job's MAX (or the --peers count). */
  expected: number;
  token: string;
}

function tableAnswers(members: Entry<'publish'>[], { token }: RosterShape): FinalAnswers {
  const table = encodeMessage({
    kind: 'table',
    token,
    ...commonNetworks(members.map((member) => member.request.networks)),
  });
  return { for: () => table, late: table, partners: () => [] };
}

/**
 * Each member encoded once, and one header for all; a full mesh shares one
 * line among all, a sampled one gives each node its partners and itself,
 * in ring order.
 */
function rosterAnswers(
  members: Entry<'register'>[],
  { expected, token }: RosterShape,
): FinalAnswers {
  const labels = uniqueLabels(members);
  const encoded = members.map((member, index) =>
    encodeMember({
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
  const sampled = nodes > FULL_MESH_MAX_NODES;
  const roster = rosterEncoder({ token, nodes, expected, late: false, sampled });
  const none = roster([]);
  const late = rosterEncoder({ token, nodes, expected, late: true, sampled })([]);
  if (!sampled) {
    const everyone = roster(encoded);
    return { for: (key) => (indexOf.has(key) ? everyone : none), late, partners: () => [] };
  }
  const partners = sampledPartners(nodes, seedOf(token));
  return {
    for: (key) => {
      const index = indexOf.get(key);
      if (index === undefined) return none;
      const own = [...(partners[index] ?? []), index].sort((a, b) => a - b);
      return roster(own.map((i) => encoded[i] as EncodedMember));
    },
    late,
    partners: (key) =>
      (partners[indexOf.get(key) ?? -1] ?? []).map((i) => (members[i] as Entry<'register'>).key),
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

/**
 * The same node asking again or rerun (a requeue, a pod restart): its name,
 * the address it came from and, for a registration, the address it
 * registered; its port may differ, a rerun listening anew.
 */
function sameMachine(held: Entry<Round>, request: Publish | Register, seen: string): boolean {
  if (held.node.name !== request.node.name || held.seen !== seen) return false;
  return (
    held.request.kind !== 'register' ||
    request.kind !== 'register' ||
    held.request.address === request.address
  );
}

/** The registration the roster was made of, not a rerun's. */
function sameRegistration(held: Entry<Round>, request: Publish | Register): boolean {
  return (
    held.request.kind !== 'register' ||
    request.kind !== 'register' ||
    held.request.port === request.port
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
