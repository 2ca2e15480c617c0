/**
 * What every readiness check is a pure function of: the job's needs, the
 * node's facts, and the two counts several checks share (the local ranks as
 * torchrun resolves them, the GPUs CUDA will show).
 */
import type { LocalRanks } from './local-ranks.js';
import type { ReadinessNeeds } from './needs.js';
import type { NodeReadiness } from './node-readiness.js';
import type { VisibleGpus } from './visible-gpus.js';

export interface CheckInput {
  needs: ReadinessNeeds;
  node: NodeReadiness;
  ranks: LocalRanks;
  gpus: VisibleGpus;
}
