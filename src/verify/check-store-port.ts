/**
 * The master node's side of `--verify master`: can torchrun's TCPStore bind
 * the rendezvous port? The store listens on every address at that port
 * (c10d/TCPStoreLibUvBackend.cpp makeWithPort binds 0.0.0.0 or ::;
 * c10d/socket.cpp SocketListenOp, for the poll-based backend, asks
 * getaddrinfo for AI_PASSIVE wildcard addresses), so a process holding the port
 * on any address of this host makes torchrun fail at start. We bind the
 * endpoint's own address first (the failure then names the address workers
 * dial), then the wildcard, and close each at once: torchrun binds it next.
 */
import { createServer } from 'node:net';
import type { Family } from '../host/host-facts.js';
import { classifySocketError, type ReachFailure } from '../reach/reach-error.js';

export type BindOutcome = { ok: true } | ({ ok: false; address: string } & ReachFailure);

export async function checkStorePort(
  address: string | null,
  port: number,
  family: Family,
): Promise<BindOutcome> {
  const wildcard = family === 'ipv6' ? '::' : '0.0.0.0';
  for (const host of address === null ? [wildcard] : [address, wildcard]) {
    const failure = await bindAndClose(host, port);
    if (failure) return { ok: false, address: host, ...failure };
  }
  return { ok: true };
}

function bindAndClose(host: string, port: number): Promise<ReachFailure | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => resolve(classifySocketError(error)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}
