/**
 * The probe's wire format: one JSON object per line (newline-delimited
 * JSON), each at most MAX_MESSAGE_BYTES long (a roster MAX_ROSTER_BYTES),
 * every one bound to the job by its token. Everything from the wire passes a
 * strict zod schema: unknown keys, wrong types, bad UTF-8, an overlong line
 * all fail.
 *
 * Three conversations, each one request per connection (SPEC "Verification",
 * peers):
 * - the master's registry: a node sends `publish` (its usable networks, for
 *   the `agree` strategy) or `register` (its chosen address and the
 *   ephemeral port it listens on); the registry answers `waiting` and, when
 *   it can hold the connection (`held`), keeps it open, pushes a fresh
 *   `waiting` now and then, and the final answer once the rendezvous is
 *   complete: `table` (the networks all nodes have) or `roster`, one line
 *   that carries every node this one meshes with as a tuple. A `waiting`
 *   that is not held tells the node to ask again after `retryMs`;
 * - the mesh: a node dials another's registered port and says `hello`; the
 *   answer is `welcome` with the source address seen, or `reject`. The
 *   registry dials a registered port too, with `prove`, when a registration
 *   came from another address than the one it claims: the node's `proof`
 *   shows that the claimed address and port are that node's (membership/claim-proof.ts);
 * - bandwidth: `stream`, then raw bytes for about a second; the receiver
 *   answers `received` with what arrived in its window.
 */
import { isIP } from 'node:net';
import * as z from 'zod/mini';
import '../zod-english.js';

export const PROTOCOL_VERSION = 6;
/** A publish of MAX_NETWORKS networks with plain names fits in well under this; every other message is far smaller. */
export const MAX_MESSAGE_BYTES = 4_096;
/** NCCL's own bound on the interfaces it considers (MAX_IFS in src/include/socket.h, 16). */
export const MAX_NETWORKS = 16;
/** Named in one `waiting` answer; the rest is a count. */
export const MAX_MISSING_LISTED = 8;
/** The registry's hard bound (Slurm's own MAX_NODES in cluster/slurm-job.ts is the same). */
export const MAX_NODES = 65_536;
/**
 * The most members one roster carries: a full mesh's FULL_MESH_MAX_NODES
 * (registry/partners.ts, 256). A sampled roster holds its node, two ring
 * neighbours, its own 31 draws and the nodes that drew it (31 on average,
 * Poisson): about 64; at most 89 over 16 seeds at 4,096 nodes, 97 at
 * 65,536 (the registry's final-answers test checks the margin at 4,096);
 * past 256 with a probability below 1e-100 per node.
 */
export const MAX_ROSTER_MEMBERS = 256;
/**
 * NCCL's socket transport has at most MAX_IFS (16) devices; the first is the
 * registered interface itself, so a node names at most 15 more.
 */
export const MAX_DATA_DEVICES = 15;
/**
 * One further device as JSON, at worst: its interface name written as \u
 * escapes (92), an address (63), a port (5), brackets and commas (4); the
 * list's own brackets and commas, and the comma before it, on top.
 */
const MAX_DEVICES_BYTES = MAX_DATA_DEVICES * (92 + 63 + 5 + 4) + MAX_DATA_DEVICES + 2;
/**
 * One member tuple as JSON, at worst: a name of 253 characters that JSON
 * writes as \u001f (6 bytes each, 1,520 with its quotes), an interface name
 * the same way (92), an address of at most MAX_ADDRESS_LENGTH ASCII
 * characters (63), six numbers (at most 34 digits), brackets and commas (12);
 * then its further data-plane devices (MAX_DEVICES_BYTES).
 */
export const MAX_MEMBER_BYTES = 1_721 + MAX_DEVICES_BYTES;
/** The header's fields fit in a plain message; its members add at most this each. */
export const MAX_ROSTER_BYTES = MAX_MESSAGE_BYTES + MAX_ROSTER_MEMBERS * (MAX_MEMBER_BYTES + 1);
/** An IPv6 address's longest text (45, the IPv4-mapped form) and a zone of an interface name ("%" and 15). */
const MAX_ADDRESS_LENGTH = 61;

/*
 * Each bound is one check: zod/mini runs every check apart (z.int(),
 * z.minimum(), z.maximum(): three calls and their bookkeeping for a port),
 * and a 4,096-node job parses some 270,000 roster members, where that was
 * a third of the parse.
 */
const whole = (min: number, max: number) =>
  z
    .number()
    .check(
      z.refine(
        (value) => Number.isInteger(value) && value >= min && value <= max,
        `expected a whole number from ${min} to ${max}`,
      ),
    );
const text = (maxLength: number) =>
  z
    .string()
    .check(
      z.refine(
        (value) => value.length >= 1 && value.length <= maxLength,
        `expected 1 to ${maxLength} characters`,
      ),
    );
const token = z.string().check(z.regex(/^[0-9a-f]{32}$/, 'expected 32 hex digits'));
const address = z
  .string()
  .check(
    z.refine(
      (value) => value.length <= MAX_ADDRESS_LENGTH && isIP(value) !== 0,
      'expected an IP address',
    ),
  );
const version = z.literal(PROTOCOL_VERSION);
const count = (max: number) => whole(0, max);
/** A host name (RFC 1035's 253) or a listed address. */
const name = text(253);
/** Linux IFNAMSIZ is 16, NUL included. */
const interfaceName = text(15);
const port = whole(1, 65_535);
const speedMbps = z.nullable(count(100_000_000));
const prefixLength = count(128);
/** An interface's MTU; null where it could not be read. Linux's largest is 65,536 (lo's). */
const mtu = z.nullable(count(65_536));

const node = z.strictObject({ name, rank: z.nullable(count(MAX_NODES - 1)) });

/** One usable interface of a node, on one network, as `agree` ranks it. */
const publishedNetwork = z.strictObject({
  interface: interfaceName,
  address,
  prefixLength,
  speedMbps,
  /** The RDMA device behind it (mlx5_0), null for none. */
  rdma: z.nullable(text(64)),
});

const publishSchema = z.strictObject({
  v: version,
  kind: z.literal('publish'),
  token,
  node,
  networks: z.array(publishedNetwork).check(z.maxLength(MAX_NETWORKS)),
});

/** net.ipv4.ip_local_port_range of the registering node: where its ephemeral ports come from. */
const portRange = z.tuple([port, port]);

/** 16 random bytes, hex: a registration's proof key, a dial-back's nonce. */
const nonce = z.string().check(z.regex(/^[0-9a-f]{32}$/, 'expected 32 hex digits'));
/** A MUNGE credential as munge(1) prints it: "MUNGE:" base64 ":" (munge/src/libmunge/encode.c). */
const mungeCredential = z
  .string()
  .check(z.maxLength(2_048), z.regex(/^MUNGE:[A-Za-z0-9+/=]+:$/, 'expected a MUNGE credential'));

/**
 * A further socket device of NCCL's data plane on the registering node
 * (SPEC "NCCL's own pick": a kept NCCL_SOCKET_IFNAME that matches several
 * interfaces): its interface, the address NCCL listens on there, and the
 * ephemeral port this node's check listens on in its place.
 */
const dataDevice = z.tuple([interfaceName, address, port]);
/**
 * Left out where a node has none, nearly everywhere: a 4,096-node job's
 * rosters then cost what they cost before devices (6 % of the master's CPU
 * with an empty list in every member, scripts/bench-peers.js).
 */
const dataDevices = z.array(dataDevice).check(z.maxLength(MAX_DATA_DEVICES));

const registerSchema = z.strictObject({
  v: version,
  kind: z.literal('register'),
  token,
  node,
  interface: interfaceName,
  address,
  port,
  speedMbps,
  portRange,
  /** The chosen interface's MTU (/sys/class/net/IF/mtu): nodes that differ mark a path that may drop large frames. */
  mtu,
  /** NCCL's further data-plane devices on this node, in its index order; absent where it has one. */
  devices: z.optional(dataDevices),
  /** The key this node's service answers `prove` with: it proves the address and port are its own. */
  proofKey: nonce,
  /** Under Slurm, a MUNGE credential whose payload binds it to this registration (membership/munge.ts); null without. */
  munge: z.nullable(mungeCredential),
});

const waitingSchema = z.strictObject({
  v: version,
  kind: z.literal('waiting'),
  token,
  round: z.enum(['publish', 'register']),
  registered: count(MAX_NODES),
  expected: count(MAX_NODES),
  /** An elastic job's MIN (--nnodes MIN:MAX); `expected` otherwise. */
  minimum: count(MAX_NODES),
  /** MIN nodes are there: the rendezvous completes with whoever came in this long (torch's last call). */
  lastCallMs: z.nullable(count(86_400_000)),
  /** Who has not come, by Slurm name, --peers entry or rank; at most MAX_MISSING_LISTED. */
  missing: z.array(name).check(z.maxLength(MAX_MISSING_LISTED)),
  /** The registry keeps this connection and pushes the final answer on it. */
  held: z.boolean(),
  /** Not held: when to ask again, the registry pacing its own load. */
  retryMs: count(60_000),
});

/** A network every node has an address on, as the registry aggregated it. */
const commonNetwork = z.strictObject({
  network: address,
  prefixLength,
  /** The slowest node's interface on it; null when any node's speed is unknown. */
  slowestMbps: speedMbps,
  /** Every node's interface on it is RDMA-backed. */
  rdma: z.boolean(),
  /** Addresses that more than one node holds (docker0's 172.17.0.1): such a network never counts. */
  duplicated: z.array(address).check(z.maxLength(4)),
});

const tableSchema = z.strictObject({
  v: version,
  kind: z.literal('table'),
  token,
  nodes: count(MAX_NODES),
  common: z.array(commonNetwork).check(z.maxLength(MAX_NETWORKS)),
  /** Networks only some nodes have, for the trace; at most MAX_MISSING_LISTED, then a count. */
  partial: z
    .array(z.strictObject({ network: address, prefixLength, nodes: count(MAX_NODES) }))
    .check(z.maxLength(MAX_MISSING_LISTED)),
  partialMore: count(MAX_NODES * MAX_NETWORKS),
});

/**
 * One node of a roster, as a tuple (a roster of 64 members is one line of
 * some 3 KB, parsed at once, not 64 objects' keys): its name (labelled when
 * two members share one), rank, interface, address, ephemeral port, link
 * speed, net.ipv4.ip_local_port_range, the interface's MTU and NCCL's
 * further data-plane devices there.
 */
const memberTuple = z.tuple([
  name,
  z.nullable(count(MAX_NODES - 1)),
  interfaceName,
  address,
  port,
  speedMbps,
  portRange,
  mtu,
  z.optional(dataDevices),
]);

const rosterSchema = z.strictObject({
  v: version,
  kind: z.literal('roster'),
  token,
  nodes: count(MAX_NODES),
  /** The job's MAX: `nodes` below it is an elastic job that completed at MIN after the last call. */
  expected: count(MAX_NODES),
  /**
   * The rendezvous had completed before this node (re)registered: it is no
   * member (torch puts such a node on its wait list), and has no members.
   */
  late: z.boolean(),
  /** Above FULL_MESH_MAX_NODES: ring neighbours plus a sample, not everyone. */
  sampled: z.boolean(),
  /** Everyone this node meshes with, and itself, in ring order; none for a late node or one --peers leaves out. */
  members: z.array(memberTuple).check(z.maxLength(MAX_ROSTER_MEMBERS)),
});

/** The dialing node: its name in the roster and the address it sends from. */
const helloSchema = z.strictObject({
  v: version,
  kind: z.literal('hello'),
  token,
  peer: name,
  address,
});

/** The listener: same job; `seen` is the source address it saw the hello come from. */
const welcomeSchema = z.strictObject({
  v: version,
  kind: z.literal('welcome'),
  token,
  seen: address,
});

/** Not served: another job's token ('token'), or the registry says why (a rank held twice, a newer registration of the node). */
const rejectSchema = z.strictObject({
  v: version,
  kind: z.literal('reject'),
  reason: text(400),
});

/** The registry to a registered port: show that you hold the key this address and port registered with. */
const proveSchema = z.strictObject({
  v: version,
  kind: z.literal('prove'),
  token,
  nonce,
});

/** The node's answer: HMAC-SHA256 of the token and the nonce under its proof key, hex. */
const proofSchema = z.strictObject({
  v: version,
  kind: z.literal('proof'),
  token,
  mac: z.string().check(z.regex(/^[0-9a-f]{64}$/, 'expected 64 hex digits')),
});

/** The start of a bandwidth measurement; raw bytes follow on the same connection. */
const streamSchema = z.strictObject({
  v: version,
  kind: z.literal('stream'),
  token,
  peer: name,
  address,
});

/** What the receiver counted in its window. */
const receivedSchema = z.strictObject({
  v: version,
  kind: z.literal('received'),
  token,
  bytes: count(Number.MAX_SAFE_INTEGER),
  ms: count(60_000),
});

const probeMessageSchema = z.discriminatedUnion('kind', [
  publishSchema,
  registerSchema,
  waitingSchema,
  tableSchema,
  rosterSchema,
  helloSchema,
  welcomeSchema,
  rejectSchema,
  proveSchema,
  proofSchema,
  streamSchema,
  receivedSchema,
]);

export type Publish = z.infer<typeof publishSchema>;
export type PublishedNetwork = z.infer<typeof publishedNetwork>;
export type Register = z.infer<typeof registerSchema>;
export type Waiting = z.infer<typeof waitingSchema>;
export type Table = z.infer<typeof tableSchema>;
export type CommonNetwork = z.infer<typeof commonNetwork>;
export type Roster = z.infer<typeof rosterSchema>;
export type MemberTuple = z.infer<typeof memberTuple>;
/** A roster member as the mesh reads it. */
export interface Member {
  name: string;
  rank: number | null;
  interface: string;
  address: string;
  port: number;
  speedMbps: number | null;
  portRange: [number, number];
  mtu: number | null;
  /** NCCL's further data-plane devices on that node, each listened on at its own ephemeral port. */
  devices: DataDevice[];
}
/** One further socket device of NCCL's data plane, as a node registered it. */
export interface DataDevice {
  interface: string;
  address: string;
  port: number;
}
export type Hello = z.infer<typeof helloSchema>;
export type Welcome = z.infer<typeof welcomeSchema>;
export type Reject = z.infer<typeof rejectSchema>;
export type Prove = z.infer<typeof proveSchema>;
export type Proof = z.infer<typeof proofSchema>;
export type Stream = z.infer<typeof streamSchema>;
export type Received = z.infer<typeof receivedSchema>;
export type ProbeMessage = z.infer<typeof probeMessageSchema>;
export type NodeIdentity = z.infer<typeof node>;

/** A message as it goes on the wire, `v` added. */
export type Outgoing = ProbeMessage extends infer M
  ? M extends ProbeMessage
    ? Omit<M, 'v'>
    : never
  : never;

export function encodeMessage(message: Outgoing): Buffer {
  const line = Buffer.from(
    `${JSON.stringify(probeMessageSchema.parse({ v: PROTOCOL_VERSION, ...message }))}\n`,
    'utf8',
  );
  if (line.length > maxBytesOf(message.kind)) {
    throw new RangeError(
      `probe message of ${line.length} bytes exceeds ${maxBytesOf(message.kind)}`,
    );
  }
  return line;
}

/** A member checked and written once, however many rosters it goes into. */
export type EncodedMember = { readonly bytes: Buffer };

export function encodeMember(member: Member): EncodedMember {
  const tuple = memberTuple.parse([
    member.name,
    member.rank,
    member.interface,
    member.address,
    member.port,
    member.speedMbps,
    member.portRange,
    member.mtu,
    ...(member.devices.length > 0
      ? [member.devices.map((device) => [device.interface, device.address, device.port])]
      : []),
  ]);
  return { bytes: Buffer.from(JSON.stringify(tuple)) };
}

export type RosterHeader = Omit<Roster, 'v' | 'kind' | 'members'>;

const COMMA = 0x2c;
const ROSTER_END = Buffer.from(']}\n');

/**
 * The roster lines of one header: the header checked once, each roster
 * its members' checked bytes copied together, so that thousands of rosters
 * cost no schema pass and no UTF-8 encoding each. What comes out is what
 * encodeMessage would write.
 */
export function rosterEncoder(header: RosterHeader): (members: readonly EncodedMember[]) => Buffer {
  const { members: _none, ...checked } = rosterSchema.parse({
    v: PROTOCOL_VERSION,
    kind: 'roster',
    ...header,
    members: [],
  });
  const head = Buffer.from(`${JSON.stringify(checked).slice(0, -1)},"members":[`);
  return (members) => {
    if (members.length > MAX_ROSTER_MEMBERS) {
      throw new RangeError(`a roster of ${members.length} members exceeds ${MAX_ROSTER_MEMBERS}`);
    }
    let size = head.length + ROSTER_END.length + Math.max(0, members.length - 1);
    for (const member of members) size += member.bytes.length;
    if (size > MAX_ROSTER_BYTES) {
      throw new RangeError(`probe message of ${size} bytes exceeds ${MAX_ROSTER_BYTES}`);
    }
    const line = Buffer.allocUnsafe(size);
    line.set(head, 0);
    let at = head.length;
    members.forEach((member, index) => {
      if (index > 0) line[at++] = COMMA;
      line.set(member.bytes, at);
      at += member.bytes.length;
    });
    line.set(ROSTER_END, at);
    return line;
  };
}

/** A roster's tuples as the mesh reads them. */
export function rosterMembers(roster: Roster): Member[] {
  return roster.members.map(
    ([name, rank, iface, address, port, speedMbps, portRange, mtu, devices]) => ({
      name,
      rank,
      interface: iface,
      address,
      port,
      speedMbps,
      portRange,
      mtu,
      devices: (devices ?? []).map(([deviceInterface, deviceAddress, devicePort]) => ({
        interface: deviceInterface,
        address: deviceAddress,
        port: devicePort,
      })),
    }),
  );
}

/** A roster's bound is its own; every other message's is MAX_MESSAGE_BYTES. */
function maxBytesOf(kind: ProbeMessage['kind']): number {
  return kind === 'roster' ? MAX_ROSTER_BYTES : MAX_MESSAGE_BYTES;
}

export type ReadOutcome =
  | { kind: 'message'; message: ProbeMessage }
  /** `version`: a probe message of another protocol version, another nccl-run release's. */
  | { kind: 'invalid'; reason: string; version?: number };

const NEWLINE = 0x0a;
/** One for every reader: each line is decoded whole (no streaming state), and thousands of connections each made their own. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Splits a byte stream into messages, whatever the chunking. After the first
 * invalid line it stops reading: the connection is to be dropped, and a
 * strict reader gives a misbehaving peer nothing more to work with. A line
 * may be up to `maxBytes` long (MAX_ROSTER_BYTES where a roster is read),
 * and each message no longer than its kind's own bound.
 */
export class MessageReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failed = false;

  constructor(private readonly maxBytes: number = MAX_MESSAGE_BYTES) {}

  push(chunk: Uint8Array): ReadOutcome[] {
    const outcomes: ReadOutcome[] = [];
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (!this.failed && rest.length > 0) {
      const newline = rest.indexOf(NEWLINE);
      const head = newline === -1 ? rest : rest.subarray(0, newline);
      // The newline counts toward the limit, so a full line never exceeds maxBytes.
      if (this.pendingBytes + head.length + 1 > this.maxBytes) {
        outcomes.push(this.fail(`message longer than ${this.maxBytes - 1} bytes`));
        break;
      }
      if (newline === -1) {
        // A part line is copied: the chunk is the caller's.
        this.pending.push(Buffer.from(head));
        this.pendingBytes += head.length;
        break;
      }
      // A whole line in this chunk (nearly every one) is decoded where it lies.
      let line = head;
      if (this.pending.length > 0) {
        line = Buffer.concat([...this.pending, head], this.pendingBytes + head.length);
        this.pending = [];
        this.pendingBytes = 0;
      }
      rest = rest.subarray(newline + 1);
      const outcome = this.decodeLine(line);
      outcomes.push(outcome);
      if (outcome.kind === 'invalid') this.failed = true;
    }
    return outcomes;
  }

  /**
   * The first message and the bytes after its newline, for a conversation
   * whose request line is followed by raw data (`stream`); null until the
   * line is complete.
   */
  takeFirst(chunk: Uint8Array): { outcome: ReadOutcome; rest: Buffer } | null {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const newline = bytes.indexOf(NEWLINE);
    const head = newline === -1 ? bytes : bytes.subarray(0, newline + 1);
    const [outcome] = this.push(head);
    if (outcome === undefined) return null;
    return { outcome, rest: newline === -1 ? Buffer.alloc(0) : bytes.subarray(newline + 1) };
  }

  private decodeLine(line: Buffer): ReadOutcome {
    let text: string;
    try {
      text = UTF8.decode(line);
    } catch {
      return { kind: 'invalid', reason: 'not UTF-8' };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { kind: 'invalid', reason: 'not JSON' };
    }
    const version = (json as { v?: unknown } | null)?.v;
    if (typeof version === 'number' && version !== PROTOCOL_VERSION) {
      // Another release's probe (a node not yet upgraded, an image left behind):
      // said so, not left as a schema error or a connection closed unanswered.
      return {
        kind: 'invalid',
        reason: `the other end speaks probe protocol v${version}, this nccl-run v${PROTOCOL_VERSION}: run one nccl-run release on every node`,
        version,
      };
    }
    const parsed = probeMessageSchema.safeParse(json);
    if (!parsed.success) {
      return {
        kind: 'invalid',
        reason: `not a probe message: ${z.prettifyError(parsed.error).split('\n')[0]}`,
      };
    }
    const bound = maxBytesOf(parsed.data.kind);
    if (line.length + 1 > bound) {
      return { kind: 'invalid', reason: `${parsed.data.kind} longer than ${bound - 1} bytes` };
    }
    return { kind: 'message', message: parsed.data };
  }

  private fail(reason: string): ReadOutcome {
    this.failed = true;
    this.pending = [];
    this.pendingBytes = 0;
    return { kind: 'invalid', reason };
  }
}
