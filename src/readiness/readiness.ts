/**
 * The readiness step (SPEC "Readiness"): what the job needs from this node,
 * checked before the network is verified, from files only (the facts come
 * from read-node-readiness.ts), each check a pure function in its own file.
 * A finding that will certainly fail the job is `refused`, which the plan
 * turns into exit 78 before launch; one that may fail is a `warning` with
 * its numbers. A check the user skipped (--skip-check) says so and checks
 * nothing.
 */
import type { CheckInput } from './check-input.js';
import { CHECK_NAMES, type CheckName } from './check-names.js';
import type { Finding, Verdict } from './finding.js';
import { checkGpus } from './gpus.js';
import { localRanks } from './local-ranks.js';
import { checkMemlock } from './memlock.js';
import { checkMtu } from './mtu.js';
import type { ReadinessNeeds } from './needs.js';
import type { NodeReadiness } from './node-readiness.js';
import { checkNofile } from './nofile.js';
import { checkRpFilter } from './rp-filter.js';
import { checkShm } from './shm.js';
import { visibleGpus } from './visible-gpus.js';

const CHECKS: Record<CheckName, (input: CheckInput) => Verdict> = {
  shm: checkShm,
  memlock: checkMemlock,
  nofile: checkNofile,
  mtu: checkMtu,
  'rp-filter': checkRpFilter,
  gpus: checkGpus,
};

/** Every check's finding, in CHECK_NAMES order. */
export function readiness(
  needs: ReadinessNeeds,
  node: NodeReadiness,
  skip: readonly CheckName[] = [],
): Finding[] {
  const input: CheckInput = {
    needs,
    node,
    ranks: localRanks(needs.nprocPerNode, node, needs.torchVersion),
    gpus: visibleGpus(node.gpus),
  };
  return CHECK_NAMES.map((check) => {
    if (skip.includes(check))
      return {
        check,
        ok: true,
        level: 'ok',
        evidence: 'skipped (--skip-check)',
        fix: null,
        skipped: true,
      };
    const verdict = CHECKS[check](input);
    return { check, ok: verdict.level === 'ok', ...verdict, skipped: false };
  });
}
