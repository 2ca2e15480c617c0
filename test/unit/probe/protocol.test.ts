import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeMember,
  encodeMessage,
  MAX_DATA_DEVICES,
  MAX_MEMBER_BYTES,
  MAX_MESSAGE_BYTES,
  MAX_ROSTER_BYTES,
  MAX_ROSTER_MEMBERS,
  type Member,
  type MemberTuple,
  MessageReader,
  PROTOCOL_VERSION,
  type ProbeMessage,
  type ReadOutcome,
  rosterEncoder,
} from '../../../src/probe/protocol.js';

const token = fc.stringMatching(/^[0-9a-f]{32}$/);
const address = fc.oneof(fc.ipV4(), fc.ipV6());
const peerName = fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' });

const port = fc.integer({ min: 1, max: 65_535 });
const rank = fc.option(fc.nat(65_535), { nil: null });
const node = fc.record({ name: peerName, rank });
const interfaceName = fc.stringMatching(/^[a-z][a-z0-9]{0,14}$/);
const speedMbps = fc.option(fc.nat(1_000_000), { nil: null });
const member: fc.Arbitrary<Member> = fc.record({
  name: peerName,
  rank,
  interface: interfaceName,
  address,
  port,
  speedMbps,
  portRange: fc.tuple(port, port),
  mtu: fc.option(fc.integer({ min: 68, max: 65_536 }), { nil: null }),
  devices: fc.array(fc.record({ interface: interfaceName, address, port }), { maxLength: 3 }),
});
const rosterHeader = fc.record({
  token,
  nodes: fc.nat(65_536),
  expected: fc.nat(65_536),
  late: fc.boolean(),
  sampled: fc.boolean(),
});
const tupleOf = (m: Member): MemberTuple => {
  const fields: MemberTuple = [
    m.name,
    m.rank,
    m.interface,
    m.address,
    m.port,
    m.speedMbps,
    m.portRange,
    m.mtu,
  ];
  if (m.devices.length > 0)
    fields.push(m.devices.map((d): [string, string, number] => [d.interface, d.address, d.port]));
  return fields;
};

const message: fc.Arbitrary<ProbeMessage> = fc.oneof(
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('hello' as const),
    token,
    peer: peerName,
    address,
  }),
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('welcome' as const),
    token,
    seen: address,
  }),
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('reject' as const),
    reason: fc.string({ minLength: 1, maxLength: 100 }),
  }),
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('register' as const),
    token,
    node,
    interface: interfaceName,
    address,
    port,
    speedMbps,
    portRange: fc.tuple(port, port),
    mtu: fc.option(fc.integer({ min: 68, max: 65_536 }), { nil: null }),
    devices: fc.array(fc.tuple(interfaceName, address, port), { maxLength: 3 }),
    proofKey: token,
    munge: fc.option(fc.stringMatching(/^MUNGE:[A-Za-z0-9+/]{1,400}=?:$/), { nil: null }),
  }),
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('prove' as const),
    token,
    nonce: token,
  }),
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('proof' as const),
    token,
    mac: fc.stringMatching(/^[0-9a-f]{64}$/),
  }),
  fc
    // A few members: a longer roster passes the plain reader's bound (the roster tests read those).
    .tuple(rosterHeader, fc.array(member, { maxLength: 4 }))
    .map(([header, members]) => ({
      v: PROTOCOL_VERSION as typeof PROTOCOL_VERSION,
      kind: 'roster' as const,
      ...header,
      members: members.map(tupleOf),
    })),
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('waiting' as const),
    token,
    round: fc.constantFrom('publish' as const, 'register' as const),
    registered: fc.nat(65_536),
    expected: fc.nat(65_536),
    minimum: fc.nat(65_536),
    lastCallMs: fc.option(fc.nat(86_400_000), { nil: null }),
    missing: fc.array(peerName, { maxLength: 8 }),
    held: fc.boolean(),
    retryMs: fc.nat(60_000),
  }),
  fc.record({
    v: fc.constant(PROTOCOL_VERSION),
    kind: fc.constant('received' as const),
    token,
    bytes: fc.nat(),
    ms: fc.nat(60_000),
  }),
);

/** What goes into encodeMessage: the message without its version, which the encoder adds. */
const outgoing = (sent: ProbeMessage) => {
  const { v: _version, ...rest } = sent;
  return rest as Parameters<typeof encodeMessage>[0];
};

function readAll(
  chunks: Uint8Array[],
  reader = new MessageReader(),
): { outcomes: ReadOutcome[]; reader: MessageReader } {
  return { outcomes: chunks.flatMap((chunk) => reader.push(chunk)), reader };
}

function splitAt(bytes: Buffer, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(from, point));
    from = point;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

describe('probe message decoder', () => {
  it('decodes every valid message, split at every byte boundary', () => {
    fc.assert(
      fc.property(message, (sent) => {
        const bytes = encodeMessage(outgoing(sent));
        for (let cut = 0; cut <= bytes.length; cut += 1) {
          const { outcomes } = readAll([bytes.subarray(0, cut), bytes.subarray(cut)]);
          expect(outcomes).toEqual([{ kind: 'message', message: sent }]);
        }
      }),
      { numRuns: 200 },
    );
    // CPU only: 200 messages each decoded at every cut (about 3 s here, past 5 under CI's load).
  }, 30_000);

  it('decodes a stream of valid messages whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat()),
        (sent, cuts) => {
          const bytes = Buffer.concat(sent.map((m) => encodeMessage(outgoing(m))));
          const { outcomes } = readAll(splitAt(bytes, cuts));
          expect(outcomes).toEqual(sent.map((m) => ({ kind: 'message', message: m })));
        },
      ),
    );
  });

  it("names another release's protocol version instead of a schema error", () => {
    const older = `${JSON.stringify({ v: PROTOCOL_VERSION - 1, kind: 'waiting', token: 'a'.repeat(32) })}\n`;
    expect(new MessageReader().push(Buffer.from(older))).toEqual([
      {
        kind: 'invalid',
        reason: `the other end speaks probe protocol v${PROTOCOL_VERSION - 1}, this nccl-run v${PROTOCOL_VERSION}: run one nccl-run release on every node`,
        version: PROTOCOL_VERSION - 1,
      },
    ]);
  });

  it('never throws on garbage, and yields only valid messages or one invalid outcome, last', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 700 }), { maxLength: 6 }), (chunks) => {
        const { outcomes } = readAll(chunks);
        const invalid = outcomes.findIndex((outcome) => outcome.kind === 'invalid');
        if (invalid !== -1) expect(invalid).toBe(outcomes.length - 1);
        for (const outcome of outcomes) {
          if (outcome.kind === 'message')
            expect(() => encodeMessage(outgoing(outcome.message))).not.toThrow();
        }
      }),
      { numRuns: 500 },
    );
  });

  it('holds a truncated message without yielding anything, and delivers it once the rest comes', () => {
    fc.assert(
      fc.property(message, fc.nat(), (sent, cut) => {
        const bytes = encodeMessage(outgoing(sent));
        const held = cut % bytes.length;
        const { outcomes, reader } = readAll([bytes.subarray(0, held)]);
        expect(outcomes).toEqual([]);
        // Every held byte, and no other, makes up the line: a byte lost or kept twice breaks it.
        expect(reader.push(bytes.subarray(held))).toEqual([{ kind: 'message', message: sent }]);
        // The held bytes count toward the limit, exactly: the line may grow to it and no further.
        const filling = readAll([bytes.subarray(0, held)]).reader;
        expect(filling.push(Buffer.alloc(MAX_MESSAGE_BYTES - 1 - held, 0x61))).toEqual([]);
        expect(filling.push(Buffer.from('a'))).toEqual([
          { kind: 'invalid', reason: `message longer than ${MAX_MESSAGE_BYTES - 1} bytes` },
        ]);
      }),
    );
  });

  it('rejects an oversized line as soon as it passes the limit, before any newline', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: MAX_MESSAGE_BYTES, max: 4 * MAX_MESSAGE_BYTES }),
        fc.array(fc.nat()),
        (size, cuts) => {
          const bytes = Buffer.alloc(size, 'a'.charCodeAt(0));
          const { outcomes } = readAll(splitAt(bytes, cuts));
          expect(outcomes).toEqual([
            { kind: 'invalid', reason: `message longer than ${MAX_MESSAGE_BYTES - 1} bytes` },
          ]);
        },
      ),
    );
  });

  it('rejects, and stops reading after, a line that is not a probe message', () => {
    const cases: [string, string][] = [
      [`{"v":${PROTOCOL_VERSION},"kind":"hello"}\n`, 'not a probe message'],
      ['{"v":1,"kind":"reject","reason":"token"}\n', 'speaks probe protocol v1'],
      [
        `{"v":${PROTOCOL_VERSION},"kind":"reject","reason":"token","extra":1}\n`,
        'not a probe message',
      ],
      [
        `{"v":${PROTOCOL_VERSION},"kind":"welcome","token":"00000000000000000000000000000000","seen":"not-an-ip"}\n`,
        'not a probe message',
      ],
      [
        `{"v":${PROTOCOL_VERSION},"kind":"roster","token":"${'0'.repeat(32)}","nodes":1,"expected":1,"late":false,"sampled":false,"members":[["n",null,"eth0","198.18.0.1",0,null,[1,2],null]]}\n`,
        'not a probe message',
      ],
      [
        `{"v":${PROTOCOL_VERSION},"kind":"roster","token":"${'0'.repeat(32)}","nodes":1,"expected":1,"late":false,"sampled":false,"members":[["n",null,"eth0","198.18.0.1",1,null,[1,2],null,"extra"]]}\n`,
        'not a probe message',
      ],
      [
        `{"__proto__":{"v":${PROTOCOL_VERSION}},"kind":"reject","reason":"token"}\n`,
        'not a probe message',
      ],
      ['[1,2,3]\n', 'not a probe message'],
      ['{not json\n', 'not JSON'],
    ];
    for (const [line, reason] of cases) {
      const reader = new MessageReader();
      const outcomes = reader.push(
        Buffer.from(`${line}{"v":${PROTOCOL_VERSION},"kind":"reject","reason":"token"}\n`),
      );
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]).toMatchObject({ kind: 'invalid' });
      expect((outcomes[0] as { reason: string }).reason).toContain(reason);
    }
    const badUtf8 = new MessageReader().push(Buffer.from([0x22, 0xff, 0xfe, 0x22, 0x0a]));
    expect(badUtf8).toEqual([{ kind: 'invalid', reason: 'not UTF-8' }]);
  });

  it('refuses to encode a message that would not fit', () => {
    expect(() =>
      encodeMessage({
        kind: 'publish',
        token: 'a'.repeat(32),
        node: { name: 'node01', rank: 0 },
        // Each within its own bounds, but three bytes a character in UTF-8.
        networks: Array.from({ length: 16 }, (_, i) => ({
          interface: `€${i}`.padEnd(15, '€'),
          address: `2001:db8::${i + 1}`,
          prefixLength: 64,
          speedMbps: 400_000,
          rdma: '€'.repeat(64),
        })),
      }),
    ).toThrow(RangeError);
  });

  it('writes a roster from encoded members exactly as encodeMessage writes it', () => {
    fc.assert(
      fc.property(rosterHeader, fc.array(member, { maxLength: 12 }), (header, members) => {
        const line = rosterEncoder(header)(members.map(encodeMember));
        expect(line).toEqual(
          encodeMessage({
            kind: 'roster',
            ...header,
            members: members.map(tupleOf),
          }),
        );
      }),
    );
  });

  it('bounds a roster by its members: the worst member fits MAX_MEMBER_BYTES, a full roster MAX_ROSTER_BYTES, one more member is refused', () => {
    // Every character of the names written as a six-byte \u escape, every number at its widest.
    const worst: Member = {
      name: '\u0001'.repeat(253),
      rank: 65_535,
      interface: '\u0001'.repeat(15),
      address: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%${'a'.repeat(15)}`,
      port: 65_535,
      speedMbps: 100_000_000,
      portRange: [65_535, 65_535],
      mtu: 65_536,
      devices: Array.from({ length: MAX_DATA_DEVICES }, () => ({
        interface: '\u0001'.repeat(15),
        address: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%${'a'.repeat(15)}`,
        port: 65_535,
      })),
    };
    const encoded = encodeMember(worst);
    expect(encoded.bytes.length).toBe(MAX_MEMBER_BYTES);
    expect(() => encodeMember({ ...worst, address: `${worst.address}a` })).toThrow();
    expect(() =>
      encodeMember({ ...worst, devices: [...worst.devices, ...worst.devices.slice(0, 1)] }),
    ).toThrow();
    const header = {
      token: 'a'.repeat(32),
      nodes: 65_536,
      expected: 65_536,
      late: false,
      sampled: true,
    };
    const full = rosterEncoder(header)(Array.from({ length: MAX_ROSTER_MEMBERS }, () => encoded));
    expect(full.length).toBeLessThanOrEqual(MAX_ROSTER_BYTES);
    const [read] = new MessageReader(MAX_ROSTER_BYTES).push(full);
    expect(read).toMatchObject({ kind: 'message', message: { kind: 'roster', sampled: true } });
    expect(() =>
      rosterEncoder(header)(Array.from({ length: MAX_ROSTER_MEMBERS + 1 }, () => encoded)),
    ).toThrow(RangeError);
  });

  it("holds every message but a roster to MAX_MESSAGE_BYTES, where a reader takes rosters' longer lines", () => {
    const reason = 'x'.repeat(400);
    const header = { token: 'a'.repeat(32), nodes: 64, expected: 64, late: false, sampled: false };
    const members = Array.from({ length: 64 }, (_, i) =>
      encodeMember({
        name: `node${i}.a-long-domain.example`,
        rank: i,
        interface: 'ens3f0',
        address: `2001:db8::${i + 1}`,
        port: 40_000 + i,
        speedMbps: 400_000,
        portRange: [32_768, 60_999],
        mtu: 9_000,
        devices: [],
      }),
    );
    const roster = rosterEncoder(header)(members);
    expect(roster.length).toBeGreaterThan(MAX_MESSAGE_BYTES);
    // A plain reader refuses it as any overlong line; a roster reader takes it.
    expect(new MessageReader().push(roster)).toEqual([
      { kind: 'invalid', reason: `message longer than ${MAX_MESSAGE_BYTES - 1} bytes` },
    ]);
    expect(new MessageReader(MAX_ROSTER_BYTES).push(roster)).toEqual([
      expect.objectContaining({ kind: 'message' }),
    ]);
    // Any other kind past its own bound is refused by the roster reader too, however valid.
    const padded = Buffer.from(
      `${JSON.stringify({ v: PROTOCOL_VERSION, kind: 'reject', reason }).slice(0, -1)}${' '.repeat(MAX_MESSAGE_BYTES)}}\n`,
    );
    expect(new MessageReader(MAX_ROSTER_BYTES).push(padded)).toEqual([
      { kind: 'invalid', reason: `reject longer than ${MAX_MESSAGE_BYTES - 1} bytes` },
    ]);
  });

  it('takes the first line of a request and leaves the raw bytes after it', () => {
    const line = encodeMessage({
      kind: 'stream',
      token: 'a'.repeat(32),
      peer: 'n',
      address: '198.18.0.1',
    });
    const raw = Buffer.from([0x0a, 0, 0x7b, 0x0a]);
    const reader = new MessageReader();
    expect(reader.takeFirst(line.subarray(0, 10))).toBeNull();
    const first = reader.takeFirst(Buffer.concat([line.subarray(10), raw]));
    expect(first?.outcome).toMatchObject({
      kind: 'message',
      message: { kind: 'stream', peer: 'n' },
    });
    expect(first?.rest).toEqual(raw);
  });
});
