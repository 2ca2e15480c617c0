/**
 * The throughput half of `--verify peers` (SPEC --min-bandwidth): this node
 * sends to the next node in ring order, over the chosen path (from the
 * chosen address to the address and ephemeral port that node registered),
 * as fast as TCP lets it, for the receiver's window of about a second. The
 * receiver counts what arrived in its window and says so; that count over
 * the window is the figure, so the sender's buffers filling faster than
 * the path drains them cannot flatter it. One stream per node at once, and
 * in a ring every link carries one: the figure is the path's, not a share.
 */
import { connect } from 'node:net';
import { formatSeconds } from './clock.js';
import type { Endpoint } from './connect-once.js';
import { encodeMessage, MessageReader } from './probe-protocol.js';
import { classifySocketError, type ReachFailure } from './reach-error.js';

/** SPEC: "for about a second". */
export const BANDWIDTH_WINDOW_MS = 1_000;
/** Large writes keep the sender's cost per byte low, so the figure is the path's, not this loop's. */
const CHUNK = Buffer.alloc(256 * 1024);

export type StreamOutcome =
  | { ok: true; mbps: number; bytes: number; ms: number }
  | ({ ok: false } & ReachFailure);

export interface StreamOptions {
  target: Endpoint;
  localAddress: string;
  token: string;
  selfName: string;
  /** The receiver's window; the sender gives up this much plus attemptMs later. */
  windowMs: number;
  attemptMs: number;
}

export function streamTo(options: StreamOptions): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    const socket = connect({
      host: options.target.address,
      port: options.target.port,
      localAddress: options.localAddress,
    });
    let stopped = false;
    const settle = (outcome: StreamOutcome) => {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const limit = options.windowMs + options.attemptMs;
    const timer = setTimeout(
      () =>
        settle({
          ok: false,
          error: 'timed out',
          detail: `no count back in ${formatSeconds(limit)}`,
        }),
      limit,
    );
    const pump = () => {
      while (!stopped && socket.write(CHUNK));
    };
    socket.once('connect', () => {
      socket.write(
        encodeMessage({
          kind: 'stream',
          token: options.token,
          peer: options.selfName,
          address: options.localAddress,
        }),
      );
      socket.on('drain', pump);
      pump();
    });
    const reader = new MessageReader();
    socket.on('data', (chunk: Buffer) => {
      const [first] = reader.push(chunk);
      if (first === undefined) return;
      if (first.kind === 'invalid')
        return settle({ ok: false, error: 'no handshake', detail: first.reason });
      const answer = first.message;
      if (answer.kind === 'received' && answer.token === options.token) {
        const mbps = (answer.bytes * 8) / (answer.ms * 1_000);
        return settle({ ok: true, mbps, bytes: answer.bytes, ms: answer.ms });
      }
      settle({ ok: false, error: 'no handshake', detail: `unexpected ${answer.kind}` });
    });
    socket.once('end', () =>
      settle({ ok: false, error: 'no handshake', detail: 'closed without a count' }),
    );
    socket.once('error', (error) => settle({ ok: false, ...classifySocketError(error) }));
  });
}

/** "1 Gbit/s", "48.2 Mbit/s": how failures and logs speak of a rate. */
export function formatRate(mbps: number): string {
  if (mbps >= 1_000) return `${round(mbps / 1_000)} Gbit/s`;
  if (mbps >= 1) return `${round(mbps)} Mbit/s`;
  return `${round(mbps * 1_000)} kbit/s`;
}

function round(value: number): string {
  return String(value >= 100 ? Math.round(value) : Math.round(value * 10) / 10);
}
