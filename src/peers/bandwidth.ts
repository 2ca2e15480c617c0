/**
 * The throughput half of `--verify peers` (SPEC --min-bandwidth): this node
 * sends to the next node in ring order, over the chosen path (from the
 * chosen address to the address and ephemeral port that node registered),
 * as fast as TCP lets it, for the receiver's window: about a second with
 * --min-bandwidth, a tenth of one without. The receiver counts what
 * arrived in its window and says so; that count over the window is the
 * figure, so the sender's buffers filling faster than the path drains them
 * cannot flatter it. One stream per node at once, and
 * in a ring every link carries one: the figure is the path's, not a share.
 */
import { probeRequest } from '../probe/dial.js';
import { encodeMessage } from '../probe/protocol.js';
import { formatSeconds } from '../reach/clock.js';
import type { Endpoint } from '../reach/endpoint.js';
import type { ReachFailure } from '../reach/reach-error.js';

/** SPEC: "for about a second", with --min-bandwidth. */
export const BANDWIDTH_WINDOW_MS = 1_000;
/**
 * SPEC: without it, "a short sample (a few hundred milliseconds at most)"
 * that can only warn, under a tenth of the link's speed. TCP's slow start
 * reaches a 100 Gbit/s path's window (some 600 KB at a 50 µs datacenter
 * RTT, 43 times the initial 10 segments: 6 doublings) in well under a
 * millisecond, so 100 ms is 99% steady state; what the receiver leaves in
 * its socket buffer when the window closes (a few MB) is a few percent of
 * what a tenth of the link brings in that time. Every node waits this long
 * once in its check.
 */
export const SAMPLE_WINDOW_MS = 100;
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
  const limit = options.windowMs + options.attemptMs;
  return probeRequest<Extract<StreamOutcome, { ok: true }>>({
    target: options.target,
    localAddress: options.localAddress,
    limitMs: limit,
    timedOut: () => ({ error: 'timed out', detail: `no count back in ${formatSeconds(limit)}` }),
    onConnect: (socket, settled) => {
      socket.write(
        encodeMessage({
          kind: 'stream',
          token: options.token,
          peer: options.selfName,
          address: options.localAddress,
        }),
      );
      const pump = () => {
        while (!settled() && socket.write(CHUNK));
      };
      socket.on('drain', pump);
      pump();
    },
    answer: (answer) => {
      if (answer.kind !== 'received' || answer.token !== options.token) return undefined;
      const mbps = (answer.bytes * 8) / (answer.ms * 1_000);
      return { ok: true, mbps, bytes: answer.bytes, ms: answer.ms };
    },
    closedDetail: 'closed without a count',
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
