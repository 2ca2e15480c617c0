/**
 * The master's registry (SPEC "Verification", peers): every node of the job
 * registers with it, and once the rendezvous is complete each learns who to
 * mesh with. One registry serves one round: `publish` (every node's usable
 * networks, for the agree strategy, answered with the networks all have) or
 * `register` (each node's chosen address and ephemeral port, answered with
 * its roster). It composes who registered (registrations.ts, with --peers
 * matched by peer-matching.ts), the nodes that wait (waiting-room.ts) and
 * the final answers (final-answers.ts); what it decides itself is who is
 * admitted and when the rendezvous completes.
 *
 * Completion follows torch's c10d rendezvous (dynamic_rendezvous.py,
 * v2.6.0 `_RendezvousJoinOp`, `_add_to_participants`): at MAX nodes at
 * once; for an elastic --nnodes MIN:MAX, when the MIN-th node comes a last
 * call of `lastCallMs` starts (last_call_timeout, 30 s by default; later
 * nodes do not extend it), and at its end the rendezvous completes with
 * whoever came. A node that comes after completion, or registers again
 * (a requeue, a pod restart), is answered from the completed roster as not
 * part of it, as torch puts it on the wait list for the next round.
 *
 * A node that goes while it waits (its check killed) takes its entry with
 * it, so a rerun is not "a second node with its rank". A registration from
 * the same name, source and address as a held entry replaces it; from the
 * same name at another address (a pod made anew) too, where admission's
 * dial-back finds the old one gone, and is late once the roster is final.
 */
import { ConfigError } from '../errors.js';
import type { JobShape } from '../job/job-shape.js';
import type { Admission } from '../membership/admission.js';
import { encodeMessage, MAX_NODES, type Publish, type Register } from '../probe/protocol.js';
import type { RegistryConnection, RequestHandler } from '../probe/service.js';
import {
  type Entry,
  ownAddresses,
  type RequestOf,
  type Round,
  sameMachine,
  sameRegistration,
} from './entry.js';
import { type Completion, FinalAnswers } from './final-answers.js';
import { Registrations, type RegistrationsOptions } from './registrations.js';
import { type WaitingCount, WaitingRoom } from './waiting-room.js';

/** The registry's bound (probe/protocol.ts MAX_NODES, Slurm's own), checked before anything listens. */
export function checkRegistryBound(job: Pick<JobShape, 'nnodes'>): void {
  if (job.nnodes.max > MAX_NODES) {
    throw new ConfigError(
      `--verify peers checks at most ${MAX_NODES} nodes, and the job has ${job.nnodes.max} (${job.nnodes.origin.name}): use --verify master`,
    );
  }
}

export interface RegistryOptions<R extends Round> extends RegistrationsOptions {
  round: R;
  token: string;
  /** The last call once MIN nodes are there; null (the default): complete only at `expected`. */
  lastCallMs?: number | null;
  /** Connections held open while their nodes wait (the rest poll); unbounded by default. */
  holdCapacity?: number;
  /** What a registration must prove (membership/admission.ts); none: every registration of the job is taken. */
  admission?: Admission;
  /** A node's stale entry replaced by its rerun from another address; for the master's log. */
  onReplaced?: (name: string, was: string, now: string) => void;
}

export class Registry<R extends Round> implements RequestHandler {
  private readonly registrations: Registrations<R>;
  private readonly room: WaitingRoom<R>;
  private final: FinalAnswers<R> | null = null;
  private lastCall: { timer: NodeJS.Timeout; endsAt: number } | null = null;
  private resolveDelivered: () => void = () => {};
  private resolveFinal: () => void = () => {};
  /** Every member has been given the final answer. */
  readonly allDelivered: Promise<void>;
  /** The rendezvous is complete. */
  readonly completed: Promise<void>;

  constructor(private readonly options: RegistryOptions<R>) {
    this.registrations = new Registrations(options);
    this.room = new WaitingRoom({
      token: options.token,
      round: options.round,
      expected: this.registrations.expectedCount(),
      capacity: options.holdCapacity ?? Number.POSITIVE_INFINITY,
      count: () => this.count(),
    });
    this.allDelivered = new Promise((resolve) => {
      this.resolveDelivered = resolve;
    });
    this.completed = new Promise((resolve) => {
      this.resolveFinal = resolve;
    });
  }

  /** Who came and how the rendezvous completed; null before it has. */
  get outcome(): { nodes: number; expected: number; completion: Completion } | null {
    if (this.final === null) return null;
    return {
      nodes: this.final.members.length,
      expected: this.registrations.expectedCount(),
      completion: this.final.completion,
    };
  }

  /** The `waiting` answer as of now, for the master's own join (peers/join.ts joinLocally). */
  waitingNow(): Buffer {
    return this.room.waiting().held;
  }

  /** Stops the timers; held connections close with the service. */
  close(): void {
    this.room.close();
    if (this.lastCall !== null) clearTimeout(this.lastCall.timer);
    this.lastCall = null;
  }

  /** One request answered at once, never held: the polling form of serve(), for a registry whose admission proves nothing asynchronously. */
  answer(request: Publish | Register, seen: string): Buffer {
    let answer: Buffer | null = null;
    this.serve(
      request,
      seen,
      {
        update: () => {},
        finish: (bytes) => {
          answer = bytes;
        },
        onGone: () => {},
      },
      false,
    );
    return answer as unknown as Buffer;
  }

  serve(
    request: Publish | Register,
    seen: string,
    connection: RegistryConnection,
    hold = true,
  ): void {
    if (request.kind !== this.options.round) {
      connection.finish(this.room.waiting().polled);
      return;
    }
    const verdict =
      request.kind === 'register' ? this.options.admission?.check(request, seen) : undefined;
    if (verdict instanceof Promise) {
      // A node gone while its claim was proved leaves nothing behind.
      let gone = false;
      connection.onGone(() => {
        gone = true;
      });
      verdict.then(
        (proved) => {
          if (!gone && proved.ok) this.enter(request as RequestOf<R>, seen, connection, hold);
          else if (!gone && !proved.ok) connection.finish(reject(proved.reason));
        },
        () => connection.finish(reject('the registry could not check this registration')),
      );
      return;
    }
    if (verdict?.ok === false) {
      connection.finish(reject(verdict.reason));
      return;
    }
    this.enter(request as RequestOf<R>, seen, connection, hold);
  }

  /** An admitted request of this round. */
  private enter(
    typed: RequestOf<R>,
    seen: string,
    connection: RegistryConnection,
    hold: boolean,
  ): void {
    const key = typed.node.rank !== null ? `rank ${typed.node.rank}` : `${typed.node.name} ${seen}`;
    const held = this.registrations.get(key);
    if (held !== undefined && !sameMachine(held, typed, seen)) {
      if (this.mayBeRerun(held, typed)) {
        this.answerRerun(held, typed, seen, connection, hold);
        return;
      }
      connection.finish(
        reject(
          `${key} is registered already, by ${held.node.name} from ${held.seen}${held.request.kind === 'register' ? ` (${held.request.address})` : ''}: two nodes claim it`,
        ),
      );
      return;
    }
    if (this.final !== null) {
      connection.finish(this.afterCompletion(this.final, key, typed, seen, held));
      return;
    }
    let entry: Entry<R>;
    if (held === undefined) {
      const refusal = this.registrations.refusal(typed.node);
      if (refusal !== null) {
        connection.finish(reject(refusal));
        return;
      }
      entry = { key, node: typed.node, seen, request: typed, connection: null, told: null };
      this.registrations.add(entry);
    } else {
      entry = held;
      this.registrations.renew(held, typed);
      const stale = held.connection;
      if (stale !== null && stale !== connection) {
        this.room.release(held);
        stale.finish(reject(`${key} registered again from ${seen}: this registration is replaced`));
      }
    }
    this.room.changed();
    this.settle();
    const final = this.final as FinalAnswers<R> | null;
    if (final !== null) {
      connection.finish(final.answerFor(key));
      return;
    }
    if (!hold || !this.room.hold(entry, connection, () => this.gone(entry, connection))) {
      connection.finish(this.room.waiting().polled);
    }
  }

  /**
   * The same node name at another address, for a node of a registration
   * round: a pod made anew, a node back with a new address, whose old entry
   * may be stale. Admission can tell, by dialling the old one.
   */
  private mayBeRerun(held: Entry<R>, request: RequestOf<R>): boolean {
    return (
      this.options.admission !== undefined &&
      held.node.name === request.node.name &&
      held.request.kind === 'register' &&
      request.kind === 'register'
    );
  }

  /**
   * `held`'s node is asked whether it still runs (admission stillThere):
   * gone, its entry (and a connection the master still holds for it, half
   * open where the pod's network went first) makes way for `request`, or,
   * once the roster is final, `request` is answered from it as any node
   * after completion is (late); there, the two claim one key and the
   * newcomer is refused.
   */
  private answerRerun(
    held: Entry<R>,
    request: RequestOf<R>,
    seen: string,
    connection: RegistryConnection,
    hold: boolean,
  ): void {
    let gone = false;
    connection.onGone(() => {
      gone = true;
    });
    const admission = this.options.admission as Admission;
    admission.stillThere(held.request as Register).then(
      (there) => {
        if (gone) return;
        if (there) {
          connection.finish(
            reject(
              `${held.key} is registered already, by ${held.node.name} from ${held.seen} (${(held.request as Register).address}), which still answers there: two nodes claim it`,
            ),
          );
          return;
        }
        if (this.final !== null) {
          connection.finish(this.afterCompletion(this.final, held.key, request, seen, undefined));
          return;
        }
        if (this.registrations.holds(held)) {
          const stale = held.connection;
          this.room.release(held);
          this.registrations.remove(held);
          stale?.finish(
            reject(`${held.key} came back from ${seen}: this registration is replaced`),
          );
          this.options.onReplaced?.(held.node.name, held.seen, seen);
        }
        this.enter(request, seen, connection, hold);
      },
      () => connection.finish(reject('the registry could not check this registration')),
    );
  }

  /**
   * A registration once the roster is final: a member asking again gets its
   * roster; anyone else, a newcomer or a member's rerun from another port
   * (the roster the others have names the old one), is late.
   */
  private afterCompletion(
    final: FinalAnswers<R>,
    key: string,
    request: RequestOf<R>,
    seen: string,
    held: Entry<R> | undefined,
  ): Buffer {
    if (held !== undefined && final.keys.has(key) && sameRegistration(held, request)) {
      return final.answerFor(key);
    }
    // --peers left it out: nothing to check from there, which is no failure.
    if (this.registrations.leavesOut(request.node.name, [seen, ...ownAddresses(request)])) {
      return final.answers.for(key);
    }
    return final.answers.late;
  }

  /** A held node went before the rendezvous completed (its check was killed, or gave up): its entry goes too. */
  private gone(entry: Entry<R>, connection: RegistryConnection): void {
    if (entry.connection !== connection) return;
    this.room.release(entry);
    if (this.final !== null || !this.registrations.holds(entry)) return;
    this.registrations.remove(entry);
    this.room.changed();
    // torch clears the last call's deadline when the participants fall below MIN.
    if (this.lastCall !== null && !this.registrations.reachedMinimum()) {
      clearTimeout(this.lastCall.timer);
      this.lastCall = null;
    }
  }

  private settle(): void {
    if (this.registrations.memberCount() >= this.registrations.expectedCount()) {
      this.complete('all');
      return;
    }
    const lastCallMs = this.options.lastCallMs ?? null;
    if (lastCallMs === null || !this.registrations.reachedMinimum() || this.lastCall !== null) {
      return;
    }
    const timer = setTimeout(() => {
      this.lastCall = null;
      if (this.final === null && this.registrations.reachedMinimum()) this.complete('last call');
    }, lastCallMs);
    this.lastCall = { timer, endsAt: performance.now() + lastCallMs };
    this.room.changed();
  }

  private complete(completion: Completion): void {
    const members = this.registrations.members();
    if (completion === 'all' && members.length < this.registrations.expectedCount()) return;
    if (this.lastCall !== null) clearTimeout(this.lastCall.timer);
    this.lastCall = null;
    const final = new FinalAnswers(
      this.options.round,
      members,
      { expected: this.registrations.expectedCount(), token: this.options.token },
      completion,
      () => this.resolveDelivered(),
    );
    this.final = final;
    this.room.complete();
    this.resolveFinal();
    final.deliver(this.room.entries(), (entry) => this.room.release(entry));
  }

  /** What a `waiting` answer says now. */
  private count(): WaitingCount {
    return {
      registered: this.final?.members.length ?? this.registrations.memberCount(),
      expected: this.registrations.expectedCount(),
      minimum: this.registrations.minimumCount(),
      lastCallMs:
        this.lastCall === null
          ? null
          : Math.max(0, Math.round(this.lastCall.endsAt - performance.now())),
      missing: this.final === null ? this.registrations.missing() : [],
    };
  }
}

function reject(reason: string): Buffer {
  return encodeMessage({ kind: 'reject', reason });
}
