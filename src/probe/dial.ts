/**
 * The dialing half of the peer probe: connect from the chosen address, say
 * hello, read the answer. The listener tells us the source address it saw;
 * if that is not the address we bound, something on the path rewrote it
 * (NAT) and NCCL's bootstrap, which trusts the addresses peers announce,
 * would fail or hang.
 */
import { connect, type Socket } from 'node:net';
import { formatSeconds } from '../reach/clock.js';
import type { Endpoint } from '../reach/endpoint.js';
import { classifySocketError, type ReachFailure } from '../reach/reach-error.js';
import { encodeMessage, MessageReader, type ProbeMessage } from './protocol.js';

export interface DialOptions {
  target: Endpoint;
  /** The chosen address: bound as the source, and named in the hello. */
  localAddress: string;
  /** Left unbound: the kernel picks the source, as NCCL's ncclSocketConnect leaves it (peers/data-devices.ts). */
  unbound?: boolean;
  token: string;
  /** Our own name in the roster, so the listener knows who reached it. */
  selfName: string;
  attemptMs: number;
  /** The TCP connection is up (the hello is on its way). */
  onConnect?: () => void;
}

export type DialOutcome = { ok: true; seen: string } | ({ ok: false } & ReachFailure);

export function dialOnce(options: DialOptions): Promise<DialOutcome> {
  return probeRequest<Extract<DialOutcome, { ok: true }>>({
    target: options.target,
    localAddress: options.unbound ? null : options.localAddress,
    limitMs: options.attemptMs,
    timedOut: (connected) => ({
      error: connected ? 'no handshake' : 'timed out',
      detail: `${connected ? 'no probe answer' : 'no answer'} in ${formatSeconds(options.attemptMs)}`,
    }),
    onConnect: (socket) => {
      options.onConnect?.();
      socket.write(
        encodeMessage({
          kind: 'hello',
          token: options.token,
          peer: options.selfName,
          address: options.localAddress,
        }),
      );
    },
    answer: (answer) => {
      if (answer.kind === 'welcome' && answer.token === options.token) {
        return { ok: true, seen: answer.seen };
      }
      if (answer.kind === 'reject' && answer.reason === 'token') {
        return { ok: false, error: 'other job', detail: 'its probe token differs from ours' };
      }
      return undefined;
    },
    closedDetail: 'closed without answering the probe',
  });
}

/** One probe request on its own connection, as dialOnce and streamTo (peers/bandwidth.ts) make it. */
export interface ProbeRequest<T> {
  target: Endpoint;
  /** The chosen address, bound as the source; null: the kernel's choice. */
  localAddress: string | null;
  /** The bound on the whole exchange, connect included. */
  limitMs: number;
  /** Why it failed when limitMs passed; `connected`: whether TCP had come up. */
  timedOut: (connected: boolean) => ReachFailure;
  /** Sends the request; `settled` turns true once the exchange is over, so a sender stops. */
  onConnect: (socket: Socket, settled: () => boolean) => void;
  /** What the first message back means; undefined for one that does not answer this request. */
  answer: (message: ProbeMessage) => T | ({ ok: false } & ReachFailure) | undefined;
  /** The detail when the peer closes before it answers. */
  closedDetail: string;
}

/**
 * Connects from the chosen address and settles once, on the first message
 * back, the time limit, the peer closing first or a socket error; the socket
 * is destroyed then, whatever it still holds.
 */
export function probeRequest<T extends { ok: true }>(
  request: ProbeRequest<T>,
): Promise<T | ({ ok: false } & ReachFailure)> {
  return new Promise((resolve) => {
    const socket = connect({
      host: request.target.address,
      port: request.target.port,
      ...(request.localAddress !== null && { localAddress: request.localAddress }),
    });
    let connected = false;
    let settled = false;
    const settle = (outcome: T | ({ ok: false } & ReachFailure)) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => settle({ ok: false, ...request.timedOut(connected) }),
      request.limitMs,
    );
    const reader = new MessageReader();
    socket.once('connect', () => {
      connected = true;
      request.onConnect(socket, () => settled);
    });
    socket.on('data', (chunk: Buffer) => {
      const [first] = reader.push(chunk);
      if (first === undefined) return;
      if (first.kind === 'invalid')
        return settle({ ok: false, error: 'no handshake', detail: first.reason });
      settle(
        request.answer(first.message) ?? {
          ok: false,
          error: 'no handshake',
          detail: `unexpected ${first.message.kind}`,
        },
      );
    });
    socket.once('end', () =>
      settle({ ok: false, error: 'no handshake', detail: request.closedDetail }),
    );
    socket.once('error', (error) => settle({ ok: false, ...classifySocketError(error) }));
  });
}
