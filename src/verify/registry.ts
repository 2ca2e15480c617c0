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
import { sameAddress } from '../host/ip-address.js';
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

export interface RegistryStatus {
  registered: number;
  expected: number;
  /** Up to MAX_MISSING_LISTED names; `more` counts the rest. */
  missing: string[];
  more: number;
}

export class Registry<R extends Round> implements RequestHandler {
  private readonly entries = new Map<string, Entry<R>>();
  private readonly ranks = new Set<number>();
  private readonly names = new Set<string>();
  private final: { members: Entry<R>[]; keys: Set<string>; answers: FinalAnswers } | null = null;
  private readonly delivered = new Set<string>();
  /** The current `waiting` answer, rebuilt when a node registers: thousands of nodes ask between changes. */
  private waitingAnswer: Buffer | null = null;
  private resolveDelivered: () => void = () => {};
  /** Every member has been given the final answer. */
  readonly allDelivered: Promise<void>;

  constructor(private readonly options: RegistryOptions<R>) {
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
          this.options.restrict !== null &&
          !this.listed(typed.node.name, [
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
      this.entries.set(key, { key, node: typed.node, seen, request: typed });
      if (typed.node.rank !== null) this.ranks.add(typed.node.rank);
      this.names.add(shortName(typed.node.name));
      this.waitingAnswer = null;
      this.settle();
    } else if (this.final === null) {
      held.request = typed;
    }
    if (this.final === null) return this.waiting();
    this.markDelivered(key);
    return this.final.answers.for(key);
  }

  status(): RegistryStatus {
    const missing = this.missing();
    return {
      registered: this.final?.members.length ?? this.memberCount(),
      expected: this.expectedCount(),
      missing: missing.names,
      more: Math.max(0, missing.total - missing.names.length),
    };
  }

  get complete(): boolean {
    return this.final !== null;
  }

  private refusal(node: NodeIdentity): string | null {
    if (this.entries.size >= MAX_NODES) return `the registry holds ${MAX_NODES} nodes, its limit`;
    if (this.options.restrict !== null) return null;
    const { expected } = this.options;
    if (node.rank !== null && node.rank >= expected) {
      return `rank ${node.rank} is outside the job's ${expected} nodes (ranks 0-${expected - 1})`;
    }
    if (this.entries.size >= expected) return `all ${expected} nodes of the job have registered`;
    return null;
  }

  private expectedCount(): number {
    return this.options.restrict?.length ?? this.options.expected;
  }

  private memberCount(): number {
    return this.options.restrict === null ? this.entries.size : this.matched().size;
  }

  private listed(name: string, addresses: readonly string[]): boolean {
    return (this.options.restrict ?? []).some((peer) => listedAs(peer, name, addresses));
  }

  /**
   * --peers entries (by index) and the registration each one found: by name
   * first, then by an address the node holds, then by the address it came
   * from (a name's management address, when it registered its data one).
   */
  private matched(): Map<number, Entry<R>> {
    const found = new Map<number, Entry<R>>();
    const taken = new Set<Entry<R>>();
    const restrict = this.options.restrict ?? [];
    const passes: ((peer: ResolvedPeer, entry: Entry<R>) => boolean)[] = [
      (peer, entry) => sameName(peer.name, entry.node.name),
      (peer, entry) => holds(peer, ownAddresses(entry)),
      (peer, entry) => holds(peer, [entry.seen]),
    ];
    for (const matches of passes) {
      for (const entry of this.entries.values()) {
        if (taken.has(entry)) continue;
        const index = restrict.findIndex((peer, i) => !found.has(i) && matches(peer, entry));
        if (index === -1) continue;
        found.set(index, entry);
        taken.add(entry);
      }
    }
    return found;
  }

  private settle(): void {
    if (this.memberCount() < this.expectedCount()) return;
    const members =
      this.options.restrict === null ? [...this.entries.values()] : [...this.matched().values()];
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
    const status = this.status();
    return encodeMessage({
      kind: 'waiting',
      token: this.options.token,
      round: this.options.round,
      registered: status.registered,
      expected: status.expected,
      missing: status.missing,
      retryMs: spreadMs(status.expected),
    });
  }

  /** Who has not come, the first MAX_MISSING_LISTED by name, and how many in all. */
  private missing(): { names: string[]; total: number } {
    if (this.final !== null) return { names: [], total: 0 };
    const restrict = this.options.restrict;
    if (restrict !== null) {
      const found = this.matched();
      const names = restrict.filter((_, i) => !found.has(i)).map((peer) => peer.name);
      return { names: names.slice(0, MAX_MISSING_LISTED), total: names.length };
    }
    const { expected, nodeList } = this.options;
    const total = Math.max(0, expected - this.entries.size);
    const names: string[] = [];
    if (this.ranks.size > 0) {
      for (let rank = 0; rank < expected && names.length < MAX_MISSING_LISTED; rank += 1) {
        if (!this.ranks.has(rank)) names.push(nodeList[rank] ?? `rank ${rank}`);
      }
      return { names, total };
    }
    // Elastic jobs have no ranks yet: the node list's names that have not come.
    for (const listed of nodeList) {
      if (names.length === MAX_MISSING_LISTED) break;
      if (!this.names.has(shortName(listed))) names.push(listed);
    }
    return { names, total };
  }
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

/** A --peers entry names a node by its name (node07, node07.cluster) or by any of its addresses. */
function listedAs(peer: ResolvedPeer, name: string, addresses: readonly string[]): boolean {
  return sameName(peer.name, name) || holds(peer, addresses);
}

function sameName(listed: string, name: string): boolean {
  return listed === name || shortName(listed) === shortName(name);
}

function holds(peer: ResolvedPeer, addresses: readonly string[]): boolean {
  return peer.addresses.some((listed) => addresses.some((held) => sameAddress(listed, held)));
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
