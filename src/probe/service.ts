/**
 * The probe's server side (SPEC "Verification": "the probe's messages are
 * small, bounded and bound to the job"). The same service is, depending on
 * what it is given, a node's ephemeral listener (hello, stream) or the
 * master's registry (publish, register, and hello at the probe port); a
 * node's listener also answers the registry's `prove` of its registration.
 * Garbage, an overlong line, another job's token and silence cost the
 * sender its connection, never the service.
 *
 * Strangers cannot crowd members out: a connection that has not sent its
 * request line is "pending"; past maxPending, a newcomer pushes the oldest
 * pending one out once that has been silent a while (a member writes its
 * request the moment it connects, so it is never silent for long), or at
 * once past PENDING_BURST times the bound; and each has firstLineMs from
 * its arrival to send a whole line, however slowly it trickles bytes.
 * What the registry holds past its request is the registry's to bound.
 * Nothing is refused on arrival: a refusal would read, on the other side,
 * as a dead port or a firewall.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import {
  encodeMessage,
  type Hello,
  MessageReader,
  type ProbeMessage,
  type Stream,
} from './protocol.js';

/** A legitimate peer writes its request the moment it connects; this is generous for a loaded node. */
const FIRST_LINE_MS = 3_000;
/**
 * The kernel's queue of connections not yet accepted (listen(2); capped by
 * net.core.somaxconn, 4096 since Linux 5.4). Node's default of 511 drops the
 * SYNs of thousands of nodes that arrive at once, and each dropped one costs
 * its node a second before TCP tries again (RFC 6298's initial RTO).
 */
const BACKLOG = 4_096;
/** A pending connection this old is silent, not merely unread (a member writes as it connects). */
const SILENT_AFTER_MS = 250;
/** How far past maxPending a burst of fresh connections may go before the oldest is pushed out anyway. */
const PENDING_BURST = 8;
/** A stream's receiver waits this long past its window for the sender to hang up, then drops it. */
const LINGER_MS = 2_000;
/** How long past its window a stream that saw no data waits for its first segment before that counts as none. */
export const FIRST_SEGMENT_MS = 1_000;

/** A registry's side of one request: what it writes back, now or later. */
export interface RegistryConnection {
  /** A line that keeps the connection (progress while the registry holds it). */
  update(bytes: Buffer): void;
  /** The last answer: written whole, then the service hangs up. */
  finish(bytes: Buffer): void;
  /** Called once if the node goes before its answer was finished. */
  onGone(callback: () => void): void;
  /** The registry host's own node, joined in-process (peers/join.ts joinLocally): its answer goes first. */
  readonly local?: true;
}

/** What a registry makes of a request. */
export interface RequestHandler {
  serve(
    request: Extract<ProbeMessage, { kind: 'publish' | 'register' }>,
    seen: string,
    connection: RegistryConnection,
  ): void;
}

export interface ProbeServiceOptions {
  /** The address to bind: the chosen one, or the wildcard for the registry (as torch's store binds). */
  host: string;
  /** 0: an ephemeral port from net.ipv4.ip_local_port_range, as NCCL's listeners take. */
  port: number;
  token: string;
  /** Connections that have not sent their request yet; past it, a newcomer pushes the oldest silent one out. */
  maxPending: number;
  /** How long a pending connection must have been silent to be pushed out (SILENT_AFTER_MS). */
  silentAfterMs?: number;
  firstLineMs?: number;
  /** A hello of this job, once our welcome is handed to the kernel; `local` is the address it reached. */
  onHello?: (hello: Hello, seen: string, local: string) => void;
  /** Bandwidth: count a stream's bytes for windowMs, answer, report. */
  streams?: {
    windowMs: number;
    onReceived: (stream: Stream, seen: string, bytes: number, ms: number) => void;
  };
  registry?: RequestHandler;
  /** A request in another probe protocol version (another nccl-run release), before it is dropped. */
  onForeignVersion?: (version: number, seen: string) => void;
  /** This node's proof key (membership/claim-proof.ts): the registry's `prove` is answered under it. */
  proofKey?: string;
}

export interface ProbeService {
  /** The port bound (the kernel's choice for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** Rejects with the bind error (EADDRINUSE, EADDRNOTAVAIL) when the port cannot be had. */
export function startProbeService(options: ProbeServiceOptions): Promise<ProbeService> {
  const sockets = new Set<Socket>();
  // Insertion order is arrival order: the first is the oldest.
  const pending = new Set<Socket>();
  const arrivals = new WeakMap<Socket, number>();
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      pending.delete(socket);
    });
    if (pending.size >= options.maxPending) {
      // A burst of members that arrived together is still unread, not silent:
      // only one pending for a while, or a crowd past PENDING_BURST times the
      // bound, pushes the oldest out.
      const [oldest] = pending;
      const since = oldest === undefined ? 0 : (arrivals.get(oldest) ?? 0);
      if (
        oldest !== undefined &&
        (performance.now() - since >= (options.silentAfterMs ?? SILENT_AFTER_MS) ||
          pending.size >= options.maxPending * PENDING_BURST)
      ) {
        pending.delete(oldest);
        oldest.destroy();
      }
    }
    pending.add(socket);
    arrivals.set(socket, performance.now());
    serveOne(socket, options, () => pending.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(
      { host: options.host, port: options.port, exclusive: true, backlog: BACKLOG },
      () => {
        server.off('error', reject);
        const { port } = server.address() as { port: number };
        resolve({
          port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              for (const socket of sockets) socket.destroy();
            }),
        });
      },
    );
  });
}

function serveOne(socket: Socket, options: ProbeServiceOptions, identified: () => void): void {
  const reader = new MessageReader();
  const drop = () => socket.destroy();
  // From arrival, not from the last byte: a trickle does not extend it.
  const firstLine = setTimeout(drop, options.firstLineMs ?? FIRST_LINE_MS);
  socket.once('close', () => clearTimeout(firstLine));
  socket.on('error', drop);
  const onData = (chunk: Buffer) => {
    const first = reader.takeFirst(chunk);
    if (first === null) return;
    socket.off('data', onData);
    clearTimeout(firstLine);
    identified();
    if (first.outcome.kind === 'invalid') {
      if (first.outcome.version !== undefined) {
        options.onForeignVersion?.(first.outcome.version, unmapped(socket.remoteAddress ?? ''));
      }
      return drop();
    }
    const request = first.outcome.message;
    if ('token' in request && request.token !== options.token) {
      return answerAndClose(socket, encodeMessage({ kind: 'reject', reason: 'token' }));
    }
    const seen = unmapped(socket.remoteAddress ?? '');
    switch (request.kind) {
      case 'hello': {
        if (!options.onHello) return drop();
        const onHello = options.onHello;
        const local = unmapped(socket.localAddress ?? '');
        return answerAndClose(
          socket,
          encodeMessage({ kind: 'welcome', token: options.token, seen }),
          () => onHello(request, seen, local),
        );
      }
      case 'prove':
        if (options.proofKey === undefined) return drop();
        return answerAndClose(
          socket,
          encodeMessage({
            kind: 'proof',
            token: options.token,
            mac: proofMac(options.proofKey, options.token, request.nonce),
          }),
        );
      case 'stream':
        if (!options.streams) return drop();
        return receiveStream(socket, request, seen, first.rest, options.token, options.streams);
      case 'publish':
      case 'register':
        if (!options.registry) return drop();
        return serveRegistry(socket, options.registry, request, seen);
      default:
        return drop();
    }
  };
  socket.on('data', onData);
}

/**
 * One request costs its connection at worst: whatever the registry throws
 * on (a bug, a value its own encoder refuses) must not end the service,
 * and with it every node's check.
 */
function serveRegistry(
  socket: Socket,
  registry: RequestHandler,
  request: Extract<ProbeMessage, { kind: 'publish' | 'register' }>,
  seen: string,
): void {
  let finished = false;
  const gone: (() => void)[] = [];
  socket.once('close', () => {
    if (finished) return;
    finished = true;
    for (const callback of gone) callback();
  });
  const connection: RegistryConnection = {
    update: (bytes) => {
      if (!finished) socket.write(bytes);
    },
    finish: (bytes) => {
      if (finished) return;
      finished = true;
      answerAndClose(socket, bytes);
    },
    onGone: (callback) => {
      gone.push(callback);
    },
  };
  try {
    registry.serve(request, seen, connection);
  } catch {
    socket.destroy();
  }
}

/**
 * Writes the answer and closes at once, once the kernel has it: the peer
 * reads it and then our FIN. Not waiting for the peer to hang up frees the
 * descriptor in the time this node takes, not in the time a loaded peer
 * takes; TIME_WAIT stays on this side, as a server's should (torch's store
 * binds the port with SO_REUSEADDR, which TIME_WAIT does not stop).
 */
function answerAndClose(socket: Socket, bytes: Buffer, then?: () => void): void {
  socket.end(bytes, () => {
    socket.destroy();
    then?.();
  });
}

/**
 * Counts what arrives in a window that opens with the stream's first line,
 * answers with the count, and discards the rest: memory stays flat however
 * fast the sender is, and the window bounds the connection's life. The
 * stream counts as received once the sender has hung up, having read the
 * count: this node's check may end then, and closing a connection that
 * still has unread bytes resets it, count and all.
 */
function receiveStream(
  socket: Socket,
  stream: Stream,
  seen: string,
  rest: Buffer,
  token: string,
  { windowMs, onReceived }: NonNullable<ProbeServiceOptions['streams']>,
): void {
  let opened = performance.now();
  let bytes = rest.length;
  let closed = false;
  let confirming = false;
  const count = (chunk: Buffer) => {
    if (closed) return;
    if (confirming && bytes === rest.length) {
      // The first segment came late: measure a whole window from it.
      opened = performance.now();
      clearTimeout(window);
      window = setTimeout(expire, windowMs);
    }
    bytes += chunk.length;
  };
  const finish = () => {
    if (closed) return;
    closed = true;
    clearTimeout(window);
    const ms = Math.max(1, Math.round(performance.now() - opened));
    socket.end(encodeMessage({ kind: 'received', token, bytes, ms }));
    socket.once('close', () => onReceived(stream, seen, bytes, ms));
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
  const expire = () => {
    // Nothing after the first line is what an MTU black hole looks like, and
    // also what a loaded moment looks like (a timer runs before the I/O that
    // arrived while the loop was busy): one longer wait for the first
    // segment tells them apart, and costs only the failing case.
    if (bytes === rest.length && !confirming) {
      confirming = true;
      window = setTimeout(expire, FIRST_SEGMENT_MS);
      return;
    }
    // After this turn's I/O, so that what already arrived is counted.
    setImmediate(finish);
  };
  let window = setTimeout(expire, windowMs);
  socket.on('data', count);
  socket.once('end', finish);
}

/**
 * What a node's service answers a `prove` with: an HMAC of the nonce under
 * the node's proof key; the registry's dial-back (membership/claim-proof.ts) checks it.
 */
export function proofMac(key: string, token: string, nonce: string): string {
  return createHmac('sha256', Buffer.from(key, 'hex')).update(`${token} ${nonce}`).digest('hex');
}

/** A dual-stack socket reports an IPv4 peer as ::ffff:a.b.c.d; peers compare plain addresses. */
export function unmapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
