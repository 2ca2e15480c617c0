/**
 * The vocabulary of a failed reachability check (SPEC "Verification": a
 * failure names the error: refused, unreachable, timed out, wrong source
 * address, ephemeral ports blocked, below the bandwidth), and the mapping
 * from the socket errors Node reports to it.
 */
export type ReachError =
  /** The peer's kernel answered with a reset: nothing listens there, or a REJECT rule. */
  | 'refused'
  /** No route, or the neighbour never answered ARP/ND. */
  | 'unreachable'
  /** No answer within the attempt or the whole check: a DROP rule, a dead host, a black hole. */
  | 'timed out'
  /** The peer saw another source address than the one we sent from: NAT, or a wrong source interface. */
  | 'wrong source address'
  /** The probe listener there belongs to another job (its token differs). */
  | 'other job'
  /** Silence on the registered (ephemeral) port while the peer's probe port answers: a firewall that opens only the rendezvous ports. */
  | 'ephemeral ports blocked'
  /** The node never registered with the master's probe service before the timeout. */
  | 'not registered'
  /** The master's registry refused this node, with its reason (two nodes claiming one rank). */
  | 'rejected'
  /** The throughput measured to the next node is below --min-bandwidth. */
  | 'below the bandwidth'
  /**
   * The small exchange passed but the stream's full-size segments never
   * arrived: a hop whose MTU is smaller than the ends', with the ICMP that
   * would shrink TCP's segments lost (an MTU black hole). NCCL hangs there.
   */
  | 'large frames dropped'
  /** The port accepted the connection but did not answer the probe handshake. */
  | 'no handshake'
  /** A port this host needs is held by another process. */
  | 'port in use'
  /** The chosen address is not (or no longer) on this host, so nothing can be bound to it. */
  | 'address not available'
  /** Any other socket error; the errno is in the detail. */
  | 'failed';

/** Linux errno names (errno(3)) as Node's SystemError.code carries them. */
const BY_CODE: Record<string, ReachError> = {
  ECONNREFUSED: 'refused',
  // A reset while the handshake is still in flight is a refusal too (REJECT --reject-with tcp-reset).
  ECONNRESET: 'refused',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EHOSTDOWN: 'unreachable',
  ENETDOWN: 'unreachable',
  ETIMEDOUT: 'timed out',
  EADDRINUSE: 'port in use',
  EADDRNOTAVAIL: 'address not available',
};

export interface ReachFailure {
  error: ReachError;
  /** The errno or what was seen, e.g. ECONNREFUSED, "no answer in 5.0s", "saw 203.0.113.1". */
  detail: string;
}

export function classifySocketError(error: unknown): ReachFailure {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string') return { error: BY_CODE[code] ?? 'failed', detail: code };
  return { error: 'failed', detail: String((error as Error | null)?.message ?? error) };
}
