/**
 * The worker's side of `--verify master`: connect to the rendezvous endpoint
 * until it answers or the timeout passes. Workers routinely start before the
 * master's torchrun has bound its store, so "refused" is retried like
 * silence; only the last round's errors are reported. waitForEndpoint dials
 * one address (the data path); waitForStore dials the master's addresses as
 * torch's TCPStore client does.
 */
import type { Logger } from '../log.js';
import {
  ATTEMPT_MS,
  attemptBudgetMs,
  backoffDelayMs,
  PROGRESS_EVERY_MS,
} from '../reach/backoff.js';
import { type Deadline, formatSeconds, sleepUntil } from '../reach/clock.js';
import { type ConnectOutcome, connectOnce } from '../reach/connect-once.js';
import { type Endpoint, endpointText } from '../reach/endpoint.js';

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
  const { target, localAddress } = options;
  return waitInRounds(options, [target], async (budgetMs) => {
    const outcome = await connectOnce(target, localAddress, budgetMs());
    return { outcome, attempts: 1, address: target.address };
  });
}

export interface StoreWaitOptions extends Omit<WaitOptions, 'target' | 'localAddress'> {
  /** The master's addresses in the resolver's order (host/resolve-name.ts), IP literals as one. */
  addresses: readonly string[];
  port: number;
}

export interface StoreWaitOutcome extends WaitOutcome {
  /** The address that answered; on failure, the last one the last round tried. */
  address: string;
}

/**
 * The store as torch's TCPStore client reaches it (c10d/socket.cpp,
 * SocketConnectOp, the same in 1.13 and 2.6): each round resolves the name
 * and tries its addresses in getaddrinfo's order with no source imposed,
 * IPv6 first (prefer_ipv6: AF_INET6 with AI_V4MAPPED|AI_ALL, so the IPv4
 * ones too, then AF_INET), and the first that accepts is the store. A
 * refusal, a reset or an unreachable address moves it on to the next; one
 * that does not answer holds it there until its own timeout, so a round
 * stops at a silent address as torch would. Rounds repeat with backoff.
 */
export async function waitForStore(options: StoreWaitOptions): Promise<StoreWaitOutcome> {
  const { addresses, port } = options;
  const endpoints = addresses.map((address) => ({ address, port }));
  let address = addresses[0] ?? '';
  const waited = await waitInRounds(options, endpoints, async (budgetMs) => {
    const seen: string[] = [];
    let attempts = 0;
    let outcome: ConnectOutcome = { ok: false, error: 'failed', detail: 'no address' };
    for (const endpoint of endpoints) {
      address = endpoint.address;
      outcome = await connectOnce(endpoint, null, budgetMs());
      attempts += 1;
      if (outcome.ok || outcome.error === 'timed out') break;
      seen.push(`${endpoint.address}: ${outcome.error} (${outcome.detail})`);
    }
    const before = outcome.ok ? [] : seen.filter((line) => !line.startsWith(`${address}: `));
    if (!outcome.ok && before.length > 0) {
      outcome = { ...outcome, detail: `${outcome.detail}; before it ${before.join(', ')}` };
    }
    return { outcome, attempts, address };
  });
  return { ...waited, address };
}

interface Round {
  outcome: ConnectOutcome;
  attempts: number;
  address: string;
}

async function waitInRounds(
  options: Omit<WaitOptions, 'target' | 'localAddress'>,
  targets: readonly Endpoint[],
  /** One round of connects; budgetMs() is what the next connect may take. */
  round: (budgetMs: () => number) => Promise<Round>,
): Promise<WaitOutcome> {
  const { interfaceName, deadline, logger } = options;
  const attemptMs = options.attemptMs ?? ATTEMPT_MS;
  let last: ConnectOutcome = {
    ok: false,
    error: 'timed out',
    detail: 'no attempt fit in the timeout',
  };
  const shown = targets.map(endpointText).join(', then ');
  const progress = setInterval(() => {
    const why = last.ok ? '' : `; last attempt: ${last.error} (${last.detail})`;
    logger.info(
      `waiting for ${shown} via ${interfaceName}, ${Math.round(deadline.elapsedMs() / 1000)}s of ${formatSeconds(deadline.totalMs)}${why}`,
    );
  }, options.progressEveryMs ?? PROGRESS_EVERY_MS);
  let attempts = 0;
  let rounds = 0;
  try {
    while (!deadline.passed()) {
      const done = await round(() => attemptBudgetMs(attemptMs, deadline.remainingMs()));
      last = done.outcome;
      attempts += done.attempts;
      rounds += 1;
      if (last.ok) break;
      // The source address itself is gone or unusable: retrying cannot help.
      if (last.error === 'address not available') break;
      await sleepUntil(backoffDelayMs(rounds - 1, options.random), deadline);
    }
  } finally {
    clearInterval(progress);
  }
  return { outcome: last, attempts, elapsedMs: deadline.elapsedMs() };
}
