/**
 * The peer probe's wire format: one JSON object per line (newline-delimited
 * JSON), each at most MAX_MESSAGE_BYTES long. A dialing node sends `hello`;
 * the listener answers `welcome` (same job) or `reject` (another job's token)
 * and hangs up. Everything from the wire passes a strict zod schema: unknown
 * keys, wrong types, bad UTF-8, an overlong line all fail.
 */
import { isIP } from 'node:net';
import * as z from 'zod/mini';
import '../zod-english.js';

export const PROTOCOL_VERSION = 1;
/** A hello with a 253-byte DNS name and an IPv6 address fits in well under this. */
export const MAX_MESSAGE_BYTES = 512;

const token = z.string().check(z.regex(/^[0-9a-f]{32}$/, 'expected 32 hex digits'));
const address = z.string().check(z.refine((value) => isIP(value) !== 0, 'expected an IP address'));
const version = z.literal(PROTOCOL_VERSION);

/** The dialing node: its entry in the peer list and the address it sends from. */
const helloSchema = z.strictObject({
  v: version,
  kind: z.literal('hello'),
  token,
  peer: z.string().check(z.minLength(1), z.maxLength(253)),
  address,
});

/** The listener: same job; `seen` is the source address it saw the hello come from. */
const welcomeSchema = z.strictObject({
  v: version,
  kind: z.literal('welcome'),
  token,
  seen: address,
});

/** The listener belongs to another job (two jobs sharing a probe port). */
const rejectSchema = z.strictObject({
  v: version,
  kind: z.literal('reject'),
  reason: z.literal('token'),
});

const probeMessageSchema = z.discriminatedUnion('kind', [helloSchema, welcomeSchema, rejectSchema]);

export type Hello = z.infer<typeof helloSchema>;
export type Welcome = z.infer<typeof welcomeSchema>;
export type Reject = z.infer<typeof rejectSchema>;
export type ProbeMessage = z.infer<typeof probeMessageSchema>;

export function encodeMessage(message: ProbeMessage): Buffer {
  const line = Buffer.from(`${JSON.stringify(probeMessageSchema.parse(message))}\n`, 'utf8');
  if (line.length > MAX_MESSAGE_BYTES) {
    throw new RangeError(`probe message of ${line.length} bytes exceeds ${MAX_MESSAGE_BYTES}`);
  }
  return line;
}

export type ReadOutcome =
  | { kind: 'message'; message: ProbeMessage }
  | { kind: 'invalid'; reason: string };

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into messages, whatever the chunking. After the first
 * invalid line it stops reading: the connection is to be dropped, and a
 * strict reader gives a misbehaving peer nothing more to work with.
 */
export class MessageReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failed = false;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

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
      this.pending.push(Buffer.from(head));
      this.pendingBytes += head.length;
      if (newline === -1) break;
      const line = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
      rest = rest.subarray(newline + 1);
      const outcome = this.decodeLine(line);
      outcomes.push(outcome);
      if (outcome.kind === 'invalid') this.failed = true;
    }
    return outcomes;
  }

  /** Bytes held that never ended in a newline: a truncated message. */
  get partialBytes(): number {
    return this.pendingBytes;
  }

  private decodeLine(line: Buffer): ReadOutcome {
    let text: string;
    try {
      text = this.utf8.decode(line);
    } catch {
      return { kind: 'invalid', reason: 'not UTF-8' };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { kind: 'invalid', reason: 'not JSON' };
    }
    const parsed = probeMessageSchema.safeParse(json);
    if (!parsed.success) {
      return {
        kind: 'invalid',
        reason: `not a probe message: ${z.prettifyError(parsed.error).split('\n')[0]}`,
      };
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
