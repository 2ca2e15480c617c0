/**
 * The nodes that wait for the rendezvous to complete: each node's
 * connection is held while it waits, and the answer pushed on it when
 * final: no polling. A held node hears the count at once in a small job,
 * with the next push in a large one. Past `capacity` connections (the
 * descriptor limit) nodes are told to ask again instead.
 */
import { encodeMessage, type Waiting } from '../probe/protocol.js';
import type { RegistryConnection } from '../probe/service.js';
import { spreadMs } from '../reach/backoff.js';
import type { Entry, Round } from './entry.js';

/**
 * How soon after a node comes or goes the nodes the registry holds hear the
 * new count: at once for a small job; for a large one, whose count moves
 * with every registration, twice per progress line of theirs
 * (PROGRESS_EVERY_MS, 5 s), not thousands of writes a second.
 */
const PUSH_AFTER_MS = { small: 100, large: 2_500 } as const;
/** From this many nodes on, the `waiting` answer is re-encoded at most every RECOUNT_MS. */
const RECOUNT_NODES = 1_024;
const RECOUNT_MS = 100;

/** What a `waiting` answer says of the rendezvous, as of now. */
export type WaitingCount = Pick<
  Waiting,
  'registered' | 'expected' | 'minimum' | 'lastCallMs' | 'missing'
>;

export interface WaitingRoomOptions<R extends Round> {
  token: string;
  round: R;
  /** The members expected (the job's MAX, or the --peers count): a large job is told less often. */
  expected: number;
  /** Connections held open at once. */
  capacity: number;
  /** The registry's count, read when a `waiting` is encoded. */
  count: () => WaitingCount;
}

export class WaitingRoom<R extends Round> {
  private readonly held = new Set<Entry<R>>();
  /** The current `waiting` answers (held, polled), rebuilt when a node comes or goes. */
  private encoded: { readonly held: Buffer; readonly polled: Buffer } | null = null;
  private stale = true;
  private encodedAt = 0;
  private pushTimer: NodeJS.Timeout | null = null;
  /** The rendezvous is complete: no more pushes. */
  private closed = false;
  private readonly large: boolean;

  constructor(private readonly options: WaitingRoomOptions<R>) {
    this.large = options.expected >= RECOUNT_NODES;
  }

  /**
   * Holds `entry` on `connection` (`onGone` called if the node goes), or
   * false where the room is full and the node must ask again.
   */
  hold(entry: Entry<R>, connection: RegistryConnection, onGone: () => void): boolean {
    if (entry.connection === null && this.held.size >= this.options.capacity) return false;
    entry.connection = connection;
    entry.told = null;
    this.held.add(entry);
    connection.onGone(onGone);
    // A large job's nodes hear they are held with the next push (within
    // PUSH_AFTER_MS.large, well inside the node's attempt of ATTEMPT_MS), and
    // those that come in the last seconds only with their roster: thousands
    // of `waiting` writes at once were a fifth of the master's CPU.
    if (!this.large) this.tell(entry);
    return true;
  }

  /** `entry`'s connection is no longer held: it went, was replaced, or is answered. */
  release(entry: Entry<R>): void {
    entry.connection = null;
    this.held.delete(entry);
  }

  /** The entries held now, in the order they were first held. */
  entries(): Entry<R>[] {
    return [...this.held];
  }

  /** The count changed: the waiting answer is stale, and the held nodes hear of it soon. */
  changed(): void {
    this.stale = true;
    if (this.pushTimer !== null || this.closed) return;
    const after = this.large ? PUSH_AFTER_MS.large : PUSH_AFTER_MS.small;
    this.pushTimer = setTimeout(() => {
      this.pushTimer = null;
      this.pushProgress();
    }, after);
    this.pushTimer.unref();
  }

  /** The rendezvous is complete: the held nodes get their final answers, not the count. */
  complete(): void {
    this.closed = true;
  }

  /** Stops the push timer; held connections close with the service. */
  close(): void {
    if (this.pushTimer !== null) clearTimeout(this.pushTimer);
    this.pushTimer = null;
  }

  /** Each form encoded when first asked for after a change: thousands of nodes ask between changes. */
  waiting(): { readonly held: Buffer; readonly polled: Buffer } {
    const now = performance.now();
    // A large job's count moves with every registration: it is re-said every so often, not each time.
    const throttled = this.large && now - this.encodedAt < RECOUNT_MS;
    if (this.encoded === null || (this.stale && !throttled)) {
      this.stale = false;
      this.encodedAt = now;
      const encoded = new Map<boolean, Buffer>();
      const form = (held: boolean): Buffer => {
        const known = encoded.get(held);
        if (known !== undefined) return known;
        const bytes = this.encode(held);
        encoded.set(held, bytes);
        return bytes;
      };
      this.encoded = {
        get held() {
          return form(true);
        },
        get polled() {
          return form(false);
        },
      };
    }
    return this.encoded;
  }

  private pushProgress(): void {
    if (this.closed) return;
    for (const entry of this.held) this.tell(entry);
  }

  /** The current `waiting`, to a held node that has not heard it. */
  private tell(entry: Entry<R>): void {
    const { held } = this.waiting();
    if (entry.told === held) return;
    entry.told = held;
    entry.connection?.update(held);
  }

  private encode(held: boolean): Buffer {
    const { registered, expected, minimum, lastCallMs, missing } = this.options.count();
    return encodeMessage({
      kind: 'waiting',
      token: this.options.token,
      round: this.options.round,
      registered,
      expected,
      minimum,
      lastCallMs,
      missing,
      held,
      retryMs: spreadMs(expected),
    });
  }
}
