/**
 * The dialing half of the peer probe: connect from the chosen address, say
 * hello, read the answer. The listener tells us the source address it saw;
 * if that is not the address we bound, something on the path rewrote it
 * (NAT) and NCCL's bootstrap, which trusts the addresses peers announce,
 * would fail or hang.
 */
import { connect } from 'node:net';
import { formatSeconds } from './clock.js';
import type { Endpoint } from './connect-once.js';
import { encodeMessage, MessageReader } from './probe-protocol.js';
import { classifySocketError, type ReachFailure } from './reach-error.js';

export interface DialOptions {
  target: Endpoint;
  localAddress: string;
  token: string;
  /** Our own name in the roster, so the listener knows who reached it. */
  selfName: string;
  attemptMs: number;
  /** The TCP connection is up (the hello is on its way). */
  onConnect?: () => void;
}

export type DialOutcome = { ok: true; seen: string } | ({ ok: false } & ReachFailure);

export function dialOnce(options: DialOptions): Promise<DialOutcome> {
  return new Promise((resolve) => {
    const socket = connect({
      host: options.target.address,
      port: options.target.port,
      localAddress: options.localAddress,
    });
    let connected = false;
    const settle = (outcome: DialOutcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () =>
        settle({
          ok: false,
          error: connected ? 'no handshake' : 'timed out',
          detail: `${connected ? 'no probe answer' : 'no answer'} in ${formatSeconds(options.attemptMs)}`,
        }),
      options.attemptMs,
    );
    const reader = new MessageReader();
    socket.once('connect', () => {
      connected = true;
      options.onConnect?.();
      socket.write(
        encodeMessage({
          kind: 'hello',
          token: options.token,
          peer: options.selfName,
          address: options.localAddress,
        }),
      );
    });
    socket.on('data', (chunk: Buffer) => {
      const [first] = reader.push(chunk);
      if (first === undefined) return;
      if (first.kind === 'invalid')
        return settle({ ok: false, error: 'no handshake', detail: first.reason });
      const answer = first.message;
      if (answer.kind === 'welcome' && answer.token === options.token) {
        return settle({ ok: true, seen: answer.seen });
      }
      if (answer.kind === 'reject' && answer.reason === 'token') {
        return settle({
          ok: false,
          error: 'other job',
          detail: 'its probe token differs from ours',
        });
      }
      settle({ ok: false, error: 'no handshake', detail: `unexpected ${answer.kind}` });
    });
    socket.once('end', () =>
      settle({ ok: false, error: 'no handshake', detail: 'closed without answering the probe' }),
    );
    socket.once('error', (error) => settle({ ok: false, ...classifySocketError(error) }));
  });
}
