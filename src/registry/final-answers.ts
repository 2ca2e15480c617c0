/**
 * The registry's final answers, once the rendezvous is complete: the
 * `table` of the networks all members have (the publish round), or each
 * member's `roster` in ring order (the register round), a full mesh's one
 * line for all or a sampled one's partners. They go out a batch per turn
 * of the event loop, the registry host's own and its partners' first, so
 * that its mesh runs while the rest are written.
 */
import {
  type EncodedMember,
  encodeMember,
  encodeMessage,
  rosterEncoder,
} from '../probe/protocol.js';
import { commonNetworks } from './common-networks.js';
import type { Entry, Round } from './entry.js';
import { FULL_MESH_MAX_NODES, sampledPartners } from './partners.js';

/** Final answers written per turn of the event loop (some 20 ms of writes); a full mesh's all at once. */
const DELIVERY_BATCH = FULL_MESH_MAX_NODES;

/** How the rendezvous completed: every expected node came, or MIN and the last call ran out. */
export type Completion = 'all' | 'last call';

/** Final answers by registration key; a node --peers leaves out gets an empty roster, a late one a late one. */
interface EncodedAnswers {
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

export class FinalAnswers<R extends Round> {
  /** The members in ring order. */
  readonly members: Entry<R>[];
  readonly keys: Set<string>;
  readonly answers: EncodedAnswers;
  private readonly delivered = new Set<string>();

  constructor(
    round: R,
    members: Entry<R>[],
    shape: RosterShape,
    readonly completion: Completion,
    /** Every member has been given its answer. */
    private readonly onAllDelivered: () => void,
  ) {
    this.members = ringOrder(members);
    this.keys = new Set(this.members.map((member) => member.key));
    this.answers =
      round === 'publish'
        ? tableAnswers(this.members as Entry<'publish'>[], shape)
        : rosterAnswers(this.members as Entry<'register'>[], shape);
  }

  /** The answer for `key`, which counts as given where it is a member's. */
  answerFor(key: string): Buffer {
    this.markDelivered(key);
    return this.answers.for(key);
  }

  /**
   * The final answers to the nodes held (`release` lets each go as it is
   * answered): DELIVERY_BATCH of them, then the next batch on the event
   * loop's next turn.
   */
  deliver(held: Entry<R>[], release: (entry: Entry<R>) => void): void {
    if (this.members.length === 0) this.onAllDelivered();
    this.deliverBatch(this.deliveryOrder(held), 0, release);
  }

  /**
   * The registry host's own node first (in-process, nothing to write), then
   * its partners, whose dials its mesh waits for, then everyone else: the
   * host's mesh starts while the other rosters are still being written.
   */
  private deliveryOrder(held: Entry<R>[]): Entry<R>[] {
    const local = held.find((entry) => entry.connection?.local === true);
    if (local === undefined) return held;
    const partners = new Set(this.answers.partners(local.key));
    const rest = held.filter((entry) => entry !== local);
    return [
      local,
      ...rest.filter((entry) => partners.has(entry.key)),
      ...rest.filter((entry) => !partners.has(entry.key)),
    ];
  }

  private deliverBatch(
    entries: readonly Entry<R>[],
    from: number,
    release: (entry: Entry<R>) => void,
  ): void {
    const end = Math.min(entries.length, from + DELIVERY_BATCH);
    for (let index = from; index < end; index += 1) {
      const entry = entries[index] as Entry<R>;
      const connection = entry.connection;
      // Gone, or answered on a new connection meanwhile.
      if (connection === null) continue;
      release(entry);
      connection.finish(this.answerFor(entry.key));
    }
    if (end < entries.length) setImmediate(() => this.deliverBatch(entries, end, release));
  }

  private markDelivered(key: string): void {
    if (!this.keys.has(key)) return;
    this.delivered.add(key);
    if (this.delivered.size === this.members.length) this.onAllDelivered();
  }
}

function tableAnswers(members: Entry<'publish'>[], { token }: RosterShape): EncodedAnswers {
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
): EncodedAnswers {
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
      mtu: member.request.mtu,
      devices: (member.request.devices ?? []).map(([iface, address, port]) => ({
        interface: iface,
        address,
        port,
      })),
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

function seedOf(token: string): number {
  return Number.parseInt(token.slice(0, 8), 16) >>> 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
