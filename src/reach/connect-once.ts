/**
 * One TCP connect from the chosen address (SPEC "Verification": "a TCP
 * connect ... from a socket bound to the chosen address"), bounded by its own
 * deadline. Binding the source address is what makes the check honest: the
 * kernel would otherwise pick the source of whatever interface it routes
 * through, which is exactly the mistake NCCL and Gloo make.
 */
import { connect } from 'node:net';
import { formatSeconds } from './clock.js';
import type { Endpoint } from './endpoint.js';
import { classifySocketError, type ReachFailure } from './reach-error.js';

export type ConnectOutcome = { ok: true } | ({ ok: false } & ReachFailure);

/** localAddress null: the kernel picks the source, as torch's TCPStore client lets it. */
export function connectOnce(
  target: Endpoint,
  localAddress: string | null,
  attemptMs: number,
): Promise<ConnectOutcome> {
  return new Promise((resolve) => {
    const socket = connect({
      host: target.address,
      port: target.port,
      ...(localAddress !== null && { localAddress }),
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({
        ok: false,
        error: 'timed out',
        detail: `no answer in ${formatSeconds(attemptMs)}`,
      });
    }, attemptMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      // Closing at once is harmless to torchrun's TCPStore, which may already
      // own this port. Its poll-based server (c10d/TCPStoreBackend.cpp,
      // TCPStoreMasterDaemon::queryFds) catches the failed recv of a socket
      // whose peer has closed and drops that socket, "the store should
      // continue executing"; its libuv server (c10d/TCPStoreLibUvBackend.cpp,
      // UvTcpSocket::read_callback) closes the client handle on UV_EOF. We
      // send no bytes, so neither ever parses a query from us.
      socket.destroy();
      resolve({ ok: true });
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ok: false, ...classifySocketError(error) });
    });
  });
}
