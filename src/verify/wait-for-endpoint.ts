/**
 * The worker's side of `--verify master`: connect to the rendezvous endpoint
 * until it answers or the timeout passes. Workers routinely start before the
 * master's torchrun has bound its store, so "refused" is retried like
 * silence; only the last attempt's error is reported.
 */
import type { Logger } from '../log.js';
import { attemptBudgetMs, backoffDelayMs } from './backoff.js';
import { type Deadline, formatSeconds, sleepUntil } from './clock.js';
import { type ConnectOutcome, connectOnce, type Endpoint } from './connect-once.js';

/**
 * Linux retransmits an unanswered SYN after 1s and then 3s (initial RTO of
 * 1s, doubling; RFC 6298 §2), so a 5s attempt survives two lost SYNs before
 * we start over with a fresh socket.
 */
export const ATTEMPT_MS = 5_000;
/** SPEC: "While waiting it logs progress". */
export const PROGRESS_EVERY_MS = 5_000;

export interface WaitOptions {
  target: Endpoint;
  /** The source to connect from; null lets the kernel choose (as torch's TCPStore does). */
  localAddress: string | null;
  interfaceName: string;
  deadline: Deadline;
  logger: Logger;
  attemptMs?: number;
  progressEveryMs?: number;
  random?: () => number;
}

export interface WaitOutcome {
  outcome: ConnectOutcome;
  attempts: number;
  elapsedMs: number;
}

export async function waitForEndpoint(options: WaitOptions): Promise<WaitOutcome> {
  const { target, localAddress, interfaceName, deadline, logger } = options;
  const attemptMs = options.attemptMs ?? ATTEMPT_MS;
  let last: ConnectOutcome = {
    ok: false,
    error: 'timed out',
    detail: 'no attempt fit in the timeout',
  };
  const progress = setInterval(() => {
    const why = last.ok ? '' : `; last attempt: ${last.error} (${last.detail})`;
    logger.info(
      `waiting for ${endpointText(target)} via ${interfaceName}, ${Math.round(deadline.elapsedMs() / 1000)}s of ${formatSeconds(deadline.totalMs)}${why}`,
    );
  }, options.progressEveryMs ?? PROGRESS_EVERY_MS);
  let attempts = 0;
  try {
    while (!deadline.passed()) {
      last = await connectOnce(
        target,
        localAddress,
        attemptBudgetMs(attemptMs, deadline.remainingMs()),
      );
      attempts += 1;
      if (last.ok) break;
      // The source address itself is gone or unusable: retrying cannot help.
      if (last.error === 'address not available') break;
      await sleepUntil(backoffDelayMs(attempts - 1, options.random), deadline);
    }
  } finally {
    clearInterval(progress);
  }
  return { outcome: last, attempts, elapsedMs: deadline.elapsedMs() };
}

/** 198.18.10.1:29500, [2001:db8::1]:29500 */
export function endpointText(endpoint: Endpoint): string {
  return endpoint.address.includes(':')
    ? `[${endpoint.address}]:${endpoint.port}`
    : `${endpoint.address}:${endpoint.port}`;
}
