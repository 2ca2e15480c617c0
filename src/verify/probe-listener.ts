/**
 * The probe listener of `--verify peers` (SPEC: "answers only the probe
 * handshake, accepts a bounded number of small messages, and closes when the
 * check ends"). One hello per connection, one answer, then hang up; anything
 * else (garbage, an overlong line, silence) loses the connection, never the
 * listener.
 */
import { createServer, type Socket } from 'node:net';
import { encodeMessage, type Hello, MessageReader, PROTOCOL_VERSION } from './probe-protocol.js';

/** A legitimate peer writes its hello the moment it connects; this is generous for a loaded node. */
const IDLE_MS = 3_000;

export interface ProbeListenerOptions {
  address: string;
  port: number;
  token: string;
  /** Connections held at once; more are closed on arrival (net.Server maxConnections). */
  maxConnections: number;
  idleMs?: number;
  /** A hello of this job, after our welcome has been handed to the kernel. */
  onHello: (hello: Hello, seenSource: string) => void;
}

export interface ProbeListener {
  close(): Promise<void>;
}

/** Rejects with the bind error (EADDRINUSE, EADDRNOTAVAIL) when the port cannot be had. */
export function startProbeListener(options: ProbeListenerOptions): Promise<ProbeListener> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    serveOne(socket, options);
  });
  server.maxConnections = options.maxConnections;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.address, port: options.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve({
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const socket of sockets) socket.destroy();
          }),
      });
    });
  });
}

function serveOne(socket: Socket, options: ProbeListenerOptions): void {
  const reader = new MessageReader();
  const drop = () => socket.destroy();
  socket.setTimeout(options.idleMs ?? IDLE_MS, drop);
  socket.on('error', drop);
  socket.on('data', (chunk: Buffer) => {
    const [first] = reader.push(chunk);
    if (first === undefined) return;
    socket.removeAllListeners('data');
    if (first.kind === 'invalid' || first.message.kind !== 'hello') return drop();
    const hello = first.message;
    if (hello.token !== options.token) {
      socket.end(encodeMessage({ v: PROTOCOL_VERSION, kind: 'reject', reason: 'token' }));
      return;
    }
    const seen = unmapped(socket.remoteAddress ?? '');
    socket.end(
      encodeMessage({ v: PROTOCOL_VERSION, kind: 'welcome', token: options.token, seen }),
      () => options.onHello(hello, seen),
    );
  });
}

/** A dual-stack socket reports an IPv4 peer as ::ffff:a.b.c.d; peers compare plain addresses. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
