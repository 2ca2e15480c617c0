/**
 * A node's side of the registry: ask the master's probe service, as torch's
 * store will be reached (the master's name as torch resolves it, no source
 * address imposed: the kernel's route decides, as it does for TCPStore),
 * and wait on that connection while the registry holds it, until the answer
 * is final or the deadline passes. A service not up yet (refused) is asked
 * again every STARTING_RETRY_MS or so, with no backoff, so that no node
 * waits long once it listens; silence and dropped connections are retried
 * with backoff; a `waiting` that is not held when the registry says;
 * another job's service on the port too, since it may hand the port over;
 * a refusal with a reason ends the wait. The master node joins its own
 * registry in-process (joinLocally).
 */
import { connect } from 'node:net';
import type { Logger } from '../log.js';
import {
  encodeMessage,
  MAX_ROSTER_BYTES,
  type Member,
  MessageReader,
  type Outgoing,
  PROTOCOL_VERSION,
  type Publish,
  type Register,
  type Roster,
  rosterMembers,
  type Table,
  type Waiting,
} from '../probe/protocol.js';
import type { RequestHandler } from '../probe/service.js';
import { attemptBudgetMs, backoffDelayMs, PROGRESS_EVERY_MS } from '../reach/backoff.js';
import { type Deadline, formatSeconds, sleepUntil } from '../reach/clock.js';
import type { Endpoint } from '../reach/endpoint.js';
import { endpointText } from '../reach/endpoint.js';
import { classifySocketError, type ReachFailure } from '../reach/reach-error.js';

/** How long an answered connection waits for the registry to hang up before this node does. */
const LINGER_MS = 1_000;
/** Between asks while the master's service refuses: it is starting (its check started later than ours). */
const STARTING_RETRY_MS = 100;

export type Final =
  | { kind: 'table'; table: Table }
  /** The roster's header; its tuples read into members, not kept twice. */
  | { kind: 'roster'; roster: Omit<Roster, 'members'>; members: Member[] };

type Answer = Final | { kind: 'waiting'; waiting: Waiting } | { kind: 'reject'; reason: string };

export type JoinOutcome =
  | ({ ok: true } & Final)
  | ({ ok: false; waiting: Waiting | null; foreign?: true } & ReachFailure);

export interface JoinOptions {
  target: Endpoint;
  /**
   * A source address to register from; unset (a node's check): none, the
   * kernel's route decides, as for torch's store client. The bench's fleet
   * shares one host and gives each node its own.
   */
  localAddress?: string;
  /** How the master is named in progress and failures, e.g. "node01". */
  masterName: string;
  request: Extract<Outgoing, { kind: 'publish' | 'register' }>;
  token: string;
  deadline: Deadline;
  logger: Logger;
  attemptMs: number;
  progressEveryMs?: number;
  random?: () => number;
  /** The registry answered for the first time. */
  onReached?: () => void;
  /** The job's node count: the first asks are spread over nodes/16 ms, so that not all come at once. */
  nodes: number;
  /**
   * Give up after this many asks in a row that the port took but did not
   * answer as a probe: something else serves there (an elastic job's torch
   * store, the rendezvous having completed). Unset: retry to the deadline.
   */
  foreignLimit?: number;
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
  const heard = (held: Waiting) => {
    if (!reached) {
      reached = true;
      options.onReached?.();
    }
    if (held.round !== options.request.kind) return;
    waiting = held;
    last = { error: 'not registered', detail: waitingText(held) };
  };
  try {
    // A short spread of the first connects (a sixteenth of a millisecond per
    // node): 4,096 nodes started by one srun arrive over a quarter of a
    // second, within the listen backlog, instead of in one burst of SYNs.
    await sleepUntil(random() * (options.nodes / 16), deadline);
    for (let failures = 0, foreign = 0; !deadline.passed(); ) {
      const answer = await askOnce(
        options,
        request,
        attemptBudgetMs(options.attemptMs, deadline.remainingMs()),
        heard,
      );
      if ('error' in answer) {
        last = answer.failure;
        if (answer.waiting !== null) waiting = answer.waiting;
        foreign = answer.foreign ? foreign + 1 : 0;
        if (options.foreignLimit !== undefined && foreign >= options.foreignLimit) {
          return { ok: false, waiting, foreign: true, ...last };
        }
        // Not up yet, or a burst it could not take in: ask again soon, with no backoff.
        if (answer.failure.error === 'refused' || answer.foreign) {
          await sleepUntil(STARTING_RETRY_MS * (0.5 + random()), deadline);
          continue;
        }
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

type AskFailure = {
  error: true;
  failure: ReachFailure;
  waiting: Waiting | null;
  /** The port took the connection, and what answered was no probe. */
  foreign: boolean;
};

/**
 * What the registry says, line by line, whatever the chunking: the final
 * answer (a roster, a table), a refusal, a `waiting`, or why the bytes are
 * no answer.
 */
class AnswerReader {
  private readonly reader = new MessageReader(MAX_ROSTER_BYTES);

  constructor(private readonly token: string) {}

  /** Every outcome the chunk completes; a final one or a failure is the last. */
  push(chunk: Uint8Array): (Answer | ReachFailure)[] {
    const outcomes: (Answer | ReachFailure)[] = [];
    for (const outcome of this.reader.push(chunk)) {
      const read = this.read(outcome);
      outcomes.push(read);
      if ('error' in read || read.kind !== 'waiting') break;
    }
    return outcomes;
  }

  private read(outcome: ReturnType<MessageReader['push']>[number]): Answer | ReachFailure {
    if (outcome.kind === 'invalid') return { error: 'no handshake', detail: outcome.reason };
    const message = outcome.message;
    if ('token' in message && message.token !== this.token) {
      return { error: 'other job', detail: 'its answer has another probe token' };
    }
    switch (message.kind) {
      case 'waiting':
        return { kind: 'waiting', waiting: message };
      case 'table':
        return { kind: 'table', table: message };
      case 'reject':
        return { kind: 'reject', reason: message.reason };
      case 'roster': {
        const { members: _tuples, ...roster } = message;
        return { kind: 'roster', roster, members: rosterMembers(message) };
      }
      default:
        return { error: 'no handshake', detail: `unexpected ${message.kind}` };
    }
  }
}

/**
 * One connection: the request, then what the registry says on it until its
 * answer is final or it is not held. attemptMs bounds the wait for the
 * first answer (a large job's registry gives it with its next push, 2.5 s
 * at most: ATTEMPT_MS is 5 s); a held connection lasts as long as the check.
 */
function askOnce(
  options: JoinOptions,
  request: Buffer,
  attemptMs: number,
  heard: (waiting: Waiting) => void,
): Promise<Answer | AskFailure> {
  return new Promise((resolve) => {
    const socket = connect({
      host: options.target.address,
      port: options.target.port,
      ...(options.localAddress !== undefined && { localAddress: options.localAddress }),
    });
    const reader = new AnswerReader(options.token);
    let settled = false;
    let connected = false;
    let probeSpoke = false;
    let waiting: Waiting | null = null;
    const settle = (outcome: Answer | ReachFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(end);
      if ('error' in outcome) {
        const foreign = connected && !probeSpoke && outcome.error === 'no handshake';
        resolve({ error: true, failure: outcome, waiting, foreign });
        return void socket.destroy();
      }
      resolve(outcome);
      // The registry hangs up first once it has answered: leaving it the
      // close keeps TIME_WAIT on its side, not on ours, where a fleet of
      // simulated nodes sharing one address would run out of ports.
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    const timer = setTimeout(
      () => settle({ error: 'timed out', detail: `no answer in ${formatSeconds(attemptMs)}` }),
      attemptMs,
    );
    // A held connection ends with the check: what it last said is the verdict.
    const end = setTimeout(
      () =>
        settle(
          waiting ? { kind: 'waiting', waiting } : { error: 'timed out', detail: 'no answer' },
        ),
      Math.max(attemptMs, options.deadline.remainingMs()),
    );
    socket.once('connect', () => {
      connected = true;
      socket.write(request);
    });
    socket.on('data', (chunk: Buffer) => {
      if (settled) return;
      for (const outcome of reader.push(chunk)) {
        if (!('error' in outcome)) probeSpoke = true;
        if ('error' in outcome || outcome.kind !== 'waiting' || !outcome.waiting.held) {
          return settle(outcome);
        }
        waiting = outcome.waiting;
        clearTimeout(timer);
        heard(outcome.waiting);
      }
    });
    socket.once('end', () =>
      settle({
        error: 'no handshake',
        detail:
          waiting === null
            ? 'closed before the registry answered'
            : 'the registry closed the connection it held',
      }),
    );
    socket.once('error', (error) => settle(classifySocketError(error)));
  });
}

export interface LocalJoinOptions {
  registry: RequestHandler & { waitingNow(): Buffer };
  request: Extract<Outgoing, { kind: 'publish' | 'register' }>;
  /** The address the master would see itself come from: its own chosen one. */
  seen: string;
  token: string;
  deadline: Deadline;
  logger: Logger;
  /** How the master names itself in progress, e.g. "node01 at 198.18.0.1:29500". */
  where: string;
  progressEveryMs?: number;
}

/**
 * The master node's own registration, handed to its registry in-process:
 * no connection, no polling; the same answers, the same progress lines.
 */
export async function joinLocally(options: LocalJoinOptions): Promise<JoinOutcome> {
  const { deadline } = options;
  const reader = new AnswerReader(options.token);
  let waiting: Waiting | null = null;
  let resolveFinal: (outcome: Answer | ReachFailure) => void = () => {};
  const finished = new Promise<Answer | ReachFailure>((resolve) => {
    resolveFinal = resolve;
  });
  const take = (bytes: Buffer) => {
    for (const outcome of reader.push(bytes)) {
      if ('error' in outcome || outcome.kind !== 'waiting') return resolveFinal(outcome);
      waiting = outcome.waiting;
    }
  };
  const refresh = () => {
    if (waiting !== null) take(options.registry.waitingNow());
  };
  const progress = setInterval(() => {
    refresh();
    if (waiting !== null) {
      options.logger.info(
        `${waitingText(waiting)}; this node's probe service (${options.where}), ${Math.round(deadline.elapsedMs() / 1000)}s of ${formatSeconds(deadline.totalMs)}`,
      );
    }
  }, options.progressEveryMs ?? PROGRESS_EVERY_MS);
  const timer = setTimeout(
    () => resolveFinal({ error: 'timed out', detail: 'no answer' }),
    deadline.remainingMs(),
  );
  try {
    const message = { v: PROTOCOL_VERSION, ...options.request } as Publish | Register;
    options.registry.serve(message, options.seen, {
      update: take,
      finish: take,
      onGone: () => {},
      local: true,
    });
    const answer = await finished;
    if ('error' in answer) {
      refresh();
      if (waiting !== null) {
        return { ok: false, waiting, error: 'not registered', detail: waitingText(waiting) };
      }
      return { ok: false, waiting, ...answer };
    }
    if (answer.kind === 'table' || answer.kind === 'roster') return { ok: true, ...answer };
    if (answer.kind === 'reject') {
      return { ok: false, waiting, error: 'rejected', detail: answer.reason };
    }
    return {
      ok: false,
      waiting: answer.waiting,
      error: 'not registered',
      detail: waitingText(answer.waiting),
    };
  } finally {
    clearInterval(progress);
    clearTimeout(timer);
  }
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
