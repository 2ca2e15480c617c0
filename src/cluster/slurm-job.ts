/**
 * What a Slurm job says about itself (SPEC "Cluster fill-in"). Inside an
 * `srun` step Slurm sets the step's view: SLURM_STEP_NODELIST and
 * SLURM_STEP_NUM_NODES, with SLURM_NODEID relative to the step; in the batch
 * script only the job's (SLURM_JOB_NODELIST, SLURM_NNODES). The step's list
 * comes first so that rank, count and master all describe the same nodes
 * when a step runs on part of the allocation. SLURM_NODELIST and
 * SLURM_JOB_NUM_NODES are the older spellings.
 */
import { badValue, ConfigError } from '../errors.js';
import { firstSet, readEnvInteger } from './env-integer.js';
import { type ClusterInfo, isSet, type Scheduler, setVariables } from './scheduler.js';
import { expandHostlist } from './slurm-hostlist.js';
import { slurmMasterPort } from './slurm-master-port.js';

const NODELIST_VARIABLES = ['SLURM_STEP_NODELIST', 'SLURM_JOB_NODELIST', 'SLURM_NODELIST'];
const NODE_COUNT_VARIABLES = ['SLURM_STEP_NUM_NODES', 'SLURM_NNODES', 'SLURM_JOB_NUM_NODES'];
const MAX_NODES = 65_536;
/** Slurm's own default location of slurm.conf (Debian's slurm-wlm, and Slurm's configure default). */
const DEFAULT_SLURM_CONF = '/etc/slurm/slurm.conf';

export const slurm = {
  name: 'slurm',
  detects: (env) => isSet(env.SLURM_JOB_ID),
  read: fromSlurm,
} as const satisfies Scheduler;

function fromSlurm(env: NodeJS.ProcessEnv): ClusterInfo {
  const jobId = readEnvInteger(env, 'SLURM_JOB_ID', 1, Number.MAX_SAFE_INTEGER);
  if (jobId === null) {
    throw new ConfigError(
      '--cluster slurm: SLURM_JOB_ID is not set; run inside a Slurm job (sbatch, srun, salloc) or use --cluster auto or none',
    );
  }

  const nodelist = firstSet(env, NODELIST_VARIABLES);
  if (nodelist === null) {
    throw new ConfigError(
      `SLURM_JOB_ID is ${jobId} but none of ${NODELIST_VARIABLES.join(', ')} is set; run under sbatch/srun, or pass --cluster none`,
    );
  }
  let peers: string[];
  try {
    peers = expandHostlist(nodelist.value);
  } catch (error) {
    throw badValue({ name: nodelist.name, from: 'env' }, nodelist.value, (error as Error).message);
  }
  if (peers.length === 0) {
    throw badValue({ name: nodelist.name, from: 'env' }, nodelist.value, 'names no host');
  }

  const count = firstSet(env, NODE_COUNT_VARIABLES);
  const nnodes = count ? readEnvInteger(env, count.name, 1, MAX_NODES) : peers.length;
  const nodeRank = readEnvInteger(env, 'SLURM_NODEID', 0, MAX_NODES - 1);
  if (nodeRank !== null && nnodes !== null && nodeRank >= nnodes) {
    throw badValue(
      { name: 'SLURM_NODEID', from: 'env' },
      String(nodeRank),
      `the job has ${nnodes} nodes (${count?.name ?? nodelist.name}), so it must be 0-${nnodes - 1}`,
    );
  }

  return {
    kind: 'slurm',
    controller: 'Slurm',
    variables: [
      'SLURM_JOB_ID',
      nodelist.name,
      ...(count === null ? [] : [count.name]),
      ...setVariables(env, ['SLURM_NODEID', 'MASTER_PORT', 'SLURMD_NODENAME']),
    ],
    masterHost: peers[0] as string,
    masterPort: readEnvInteger(env, 'MASTER_PORT', 1, 65_535) ?? slurmMasterPort(jobId),
    nnodes,
    nodeRank,
    peers,
    jobId: String(jobId),
    nodeName: env.SLURMD_NODENAME?.trim() || null,
    // Slurm's auth/munge: slurm.conf's AuthInfo names the munged socket Slurm uses.
    munge: { conf: env.SLURM_CONF || DEFAULT_SLURM_CONF },
    namesComeLate: false,
  };
}
