/**
 * A node's side of the registry: ask the master's probe service, as torch's
 * store will be reached (the master's name as torch resolves it, no source
 * address imposed: the kernel's route decides, as it does for TCPStore),
 * until the answer is final or the deadline passes. The service not up yet
 * (refused, silence) is retried with backoff; `waiting` is retried when the
 * registry says; another job's service on the port is retried too, since it
 * may hand the port over; a refusal with a reason ends the wait.
 */
import { connect } from 'node:net';
import type { Logger } from '../log.js';
import { attemptBudgetMs, backoffDelayMs, spreadMs } from './backoff.js';
import { type Deadline, formatSeconds, sleepUntil } from './clock.js';
import type { Endpoint } from './connect-once.js';
import {
  encodeMessage,
  type Member,
  MessageReader,
  type Outgoing,
  type Roster,
  type Table,
  type Waiting,
} from './probe-protocol.js';
import { classifySocketError, type ReachFailure } from './reach-error.js';
import { endpointText, PROGRESS_EVERY_MS } from './wait-for-endpoint.js';

/** How long an answered connection waits for the registry to hang up before this node does. */
const LINGER_MS = 1_000;

export type Final =
  | { kind: 'table'; table: Table }
  | { kind: 'roster'; roster: Roster; members: Member[] };

type Answer = Final | { kind: 'waiting'; waiting: Waiting } | { kind: 'reject'; reason: string };

export type JoinOutcome =
  | ({ ok: true } & Final)
  | ({ ok: false; waiting: Waiting | null } & ReachFailure);

export interface JoinOptions {
  target: Endpoint;
  /** How the master is named in progress and failures, e.g. "node01". */
  masterName: string;
  request: Extract<Outgoing, { kind: 'publish' | 'register' }>;
  token: string;
  deadline: Deadline;
  logger: Logger;
  attemptMs: number;
  progressEveryMs?: number;
  random?: () => number;
  /** The registry answered for the first time: its port is bound (so ours beside it may be). */
  onReached?: () => void;
  /** The job's node count: the first ask waits a random part of spreadMs(nodes), so that not all come at once. */
  nodes: number;
}

export async function joinRegistry(options: JoinOptions): Promise<JoinOutcome> {
  const { deadline, random = Math.random } = options;
  // The same bytes every time: a node asks until the answer is final.
  const request = encodeMessage(options.request);
  let waiting: Waiting | null = null;
  let reached = false;
  let last: ReachFailure = { error: 'timed out', detail: 'no attempt fit in the timeout' };
  const progress = setInterval(
    () => options.logger.info(progressLine(options, waiting, last)),
    options.progressEveryMs ?? PROGRESS_EVERY_MS,
  );
  try {
    // Spread like the later asks, without their floor: three nodes need no spreading.
    await sleepUntil(random() * Math.min(spreadMs(options.nodes), options.nodes / 4), deadline);
    for (let failures = 0; !deadline.passed(); ) {
      const answer = await askOnce(
        options,
        request,
        attemptBudgetMs(options.attemptMs, deadline.remainingMs()),
      );
      if ('error' in answer) {
        last = answer;
        failures += 1;
        await sleepUntil(backoffDelayMs(failures - 1, random), deadline);
        continue;
      }
      failures = 0;
      if (answer.kind !== 'reject' && !reached) {
        reached = true;
        options.onReached?.();
      }
      if (answer.kind === 'table' || answer.kind === 'roster') return { ok: true, ...answer };
      if (answer.kind === 'reject') {
        if (answer.reason !== 'token') {
          return { ok: false, waiting, error: 'rejected', detail: answer.reason };
        }
        last = {
          error: 'other job',
          detail: 'the service at the probe port has another probe token',
        };
        await sleepUntil(backoffDelayMs(0, random), deadline);
        continue;
      }
      // Another round still runs there (the master is finishing `agree`'s): not ours to count.
      if (answer.waiting.round === options.request.kind) waiting = answer.waiting;
      last = { error: 'not registered', detail: waitingText(answer.waiting) };
      await sleepUntil(answer.waiting.retryMs * (0.5 + random()), deadline);
    }
  } finally {
    clearInterval(progress);
  }
  // Who had not come says more than how the last ask ended: at the deadline
  // the master's own check ends too, and its service with it.
  if (waiting !== null)
    return { ok: false, waiting, error: 'not registered', detail: waitingText(waiting) };
  return { ok: false, waiting, ...last };
}

function askOnce(
  options: JoinOptions,
  request: Buffer,
  attemptMs: number,
): Promise<Answer | ReachFailure> {
  return new Promise((resolve) => {
    const socket = connect({ host: options.target.address, port: options.target.port });
    const reader = new MessageReader();
    let roster: Roster | null = null;
    const members: Member[] = [];
    let settled = false;
    const settle = (outcome: Answer | ReachFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
      if ('error' in outcome) return void socket.destroy();
      // The registry hangs up first once it has answered: leaving it the
      // close keeps TIME_WAIT on its side, not on ours, where a fleet of
      // simulated nodes sharing one address would run out of ports.
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    const timer = setTimeout(
      () => settle({ error: 'timed out', detail: `no answer in ${formatSeconds(attemptMs)}` }),
      attemptMs,
    );
    socket.once('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      if (settled) return;
      for (const outcome of reader.push(chunk)) {
        if (outcome.kind === 'invalid')
          return settle({ error: 'no handshake', detail: outcome.reason });
        const message = outcome.message;
        if (roster !== null) {
          if (message.kind !== 'member') {
            return settle({ error: 'no handshake', detail: `a ${message.kind} inside the roster` });
          }
          members.push(message);
          if (members.length === roster.members) {
            return settle({ kind: 'roster', roster, members });
          }
          continue;
        }
        if ('token' in message && message.token !== options.token) {
          return settle({ error: 'other job', detail: 'its answer has another probe token' });
        }
        switch (message.kind) {
          case 'waiting':
            return settle({ kind: 'waiting', waiting: message });
          case 'table':
            return settle({ kind: 'table', table: message });
          case 'reject':
            return settle({ kind: 'reject', reason: message.reason });
          case 'roster':
            roster = message;
            if (message.members === 0) return settle({ kind: 'roster', roster, members });
            continue;
          default:
            return settle({ error: 'no handshake', detail: `unexpected ${message.kind}` });
        }
      }
    });
    socket.once('end', () =>
      settle({ error: 'no handshake', detail: 'closed before the registry answered' }),
    );
    socket.once('error', (error) => settle(classifySocketError(error)));
  });
}

/** "3 of 4 nodes registered, missing: node04" (SPEC "Verification"). */
export function waitingText(waiting: Waiting): string {
  const listed = waiting.missing.join(', ');
  const unnamed = waiting.expected - waiting.registered - waiting.missing.length;
  const more = unnamed > 0 ? (listed ? ` and ${unnamed} more` : `${unnamed} node(s)`) : '';
  const verb = waiting.round === 'publish' ? 'published their interfaces' : 'registered';
  return `${waiting.registered} of ${waiting.expected} nodes ${verb}, missing: ${listed}${more}`;
}

function progressLine(options: JoinOptions, waiting: Waiting | null, last: ReachFailure): string {
  const where = `the master's probe service (${options.masterName} at ${endpointText(options.target)})`;
  const time = `${Math.round(options.deadline.elapsedMs() / 1000)}s of ${formatSeconds(options.deadline.totalMs)}`;
  if (waiting !== null && last.error === 'not registered')
    return `${waitingText(waiting)}; ${where}, ${time}`;
  return `waiting for ${where}, ${time}; last attempt: ${last.error} (${last.detail})`;
}
