/**
 * The last barrier (SPEC "Verification", level collective): no node starts
 * the real job while another's pre-flight still runs. The miniature's
 * store holds the master's port until the master's miniature exits, and a
 * worker's real torchrun that reached it would join the wrong rendezvous.
 * So every node meets once more at the probe service, which the master can
 * only start once its miniature's store is gone: the peers round again
 * (its registration, its roster, a mesh with the shortest sample), its
 * figures not reported, since the first round's are.
 *
 * A node that reaches the port while the master's miniature store still
 * holds it is told the port answers as no probe (the round's "late"
 * outcome), and asks again until the deadline. A node that never comes is
 * named as the peers check names it (its Slurm name, its rank, or a count).
 */
import type { Logger } from '../log.js';
import { type ProbePeersOutcome, probePeers } from '../peers/peers.js';
import type { Plan } from '../plan/plan.js';
import { ATTEMPT_MS } from '../reach/backoff.js';
import { type Deadline, sleepUntil } from '../reach/clock.js';

/** Between asks where the master's miniature still holds the port. */
const ASK_AGAIN_MS = 250;

export type BarrierOutcome =
  | { ok: true; nodes: number }
  /** Who had not come by the deadline (names where known), and how many had. */
  | {
      ok: false;
      missing: string[];
      registered: number | null;
      expected: number | null;
      why: string;
    };

export async function lastBarrier(
  plan: Plan,
  peers: readonly string[],
  deadline: Deadline,
  logger: Logger,
): Promise<BarrierOutcome> {
  const meeting = plan.meeting;
  if (meeting === null) return { ok: true, nodes: 1 };
  for (;;) {
    const outcome: ProbePeersOutcome = await probePeers({
      job: plan.job,
      facts: plan.facts,
      decision: plan.decision,
      // A barrier: the peers level before it dialled the data-plane devices.
      devices: [],
      meeting,
      nodeName: plan.job.nodeName ?? plan.facts.hostname,
      restrict: peers,
      minBandwidthMbps: null,
      deadline,
      logger,
      attemptMs: ATTEMPT_MS,
    });
    if (outcome.kind === 'mesh' && outcome.rendezvous?.late !== true) {
      return { ok: true, nodes: outcome.rendezvous?.nodes ?? 1 };
    }
    if (outcome.kind === 'register') {
      return {
        ok: false,
        missing: outcome.missing,
        registered: outcome.registered,
        expected: outcome.expected,
        why: outcome.failure.detail ?? outcome.failure.error,
      };
    }
    if (outcome.kind === 'listen' || deadline.passed()) {
      const why =
        outcome.kind === 'listen'
          ? `the probe service could not start at ${outcome.address}:${outcome.port} (${outcome.failure.error})`
          : "the master's port still answered as torch's store";
      return { ok: false, missing: [], registered: null, expected: null, why };
    }
    logger.debug("the master's miniature still holds its port: asking again");
    await sleepUntil(ASK_AGAIN_MS, deadline);
  }
}
