import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeMessage,
  MAX_MESSAGE_BYTES,
  MessageReader,
  type ProbeMessage,
  type ReadOutcome,
} from '../../src/probe/protocol.js';

const token = fc.stringMatching(/^[0-9a-f]{32}$/);
const address = fc.oneof(fc.ipV4(), fc.ipV6());
const peerName = fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' });

const port = fc.integer({ min: 1, max: 65_535 });
const node = fc.record({ name: peerName, rank: fc.option(fc.nat(65_535), { nil: null }) });

const message: fc.Arbitrary<ProbeMessage> = fc.oneof(
  fc.record({
    v: fc.constant(3 as const),
    kind: fc.constant('hello' as const),
    token,
    peer: peerName,
    address,
  }),
  fc.record({
    v: fc.constant(3 as const),
    kind: fc.constant('welcome' as const),
    token,
    seen: address,
  }),
  fc.record({
    v: fc.constant(3 as const),
    kind: fc.constant('reject' as const),
    reason: fc.string({ minLength: 1, maxLength: 100 }),
  }),
  fc.record({
    v: fc.constant(3 as const),
    kind: fc.constant('register' as const),
    token,
    node,
    interface: fc.stringMatching(/^[a-z][a-z0-9]{0,14}$/),
    address,
    port,
    speedMbps: fc.option(fc.nat(1_000_000), { nil: null }),
    portRange: fc.tuple(port, port),
  }),
  fc.record({
    v: fc.constant(3 as const),
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
    v: fc.constant(3 as const),
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

function readAll(chunks: Uint8Array[]): { outcomes: ReadOutcome[]; reader: MessageReader } {
  const reader = new MessageReader();
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
  });

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
      ['{"v":3,"kind":"hello"}\n', 'not a probe message'],
      ['{"v":1,"kind":"reject","reason":"token"}\n', 'not a probe message'],
      ['{"v":3,"kind":"reject","reason":"token","extra":1}\n', 'not a probe message'],
      [
        '{"v":3,"kind":"welcome","token":"00000000000000000000000000000000","seen":"not-an-ip"}\n',
        'not a probe message',
      ],
      [
        '{"v":3,"kind":"member","name":"n","rank":null,"interface":"eth0","address":"198.18.0.1","port":0,"speedMbps":null,"portRange":[1,2]}\n',
        'not a probe message',
      ],
      ['{"__proto__":{"v":3},"kind":"reject","reason":"token"}\n', 'not a probe message'],
      ['[1,2,3]\n', 'not a probe message'],
      ['{not json\n', 'not JSON'],
    ];
    for (const [line, reason] of cases) {
      const reader = new MessageReader();
      const outcomes = reader.push(
        Buffer.from(`${line}{"v":3,"kind":"reject","reason":"token"}\n`),
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
