/**
 * The job's shape as torchrun will see it (SPEC "The job"): each value from
 * torchrun's command line, else the PET_<DEST> variable torchrun reads
 * itself, else (master host and port only) MASTER_ADDR/MASTER_PORT, else the
 * cluster, else torchrun's default. What the cluster fills in and torchrun
 * would not otherwise get is returned in `fill`, to be exported as PET_*.
 */

import type { ClusterInfo } from '../cluster/scheduler.js';
import { badValue } from '../errors.js';
import type { Origin, Setting } from '../origin.js';
import { parsePythonInt } from '../torch/python-builtins.js';
import { parseTorchrunArgs, type TorchrunArgs } from '../torch/torchrun-args.js';
import {
  checkTorchrunEnvironment,
  torchrunFlag,
  torchrunSetting,
} from '../torch/torchrun-environment.js';
import { type TorchrunTable, UNION_TABLE } from '../torch/torchrun-table.js';
import type { JobShape } from './job-shape.js';
import { readNnodes } from './nnodes.js';
import { nodeRankBeyondNodes } from './node-rank-range.js';
import { portZeroWithNodes } from './port-zero.js';
import { readIsHost, readRendezvousConfig } from './rendezvous-config.js';
import { readMaster } from './rendezvous-master.js';
import { clusterSetting, defaultSetting } from './setting.js';

/**
 * Reads the job's shape from torchrun's argv, PET_*, MASTER_*, the cluster
 * and torchrun's defaults, as the torchrun of `table` reads them.
 */
export function readJobShape(
  torchrunArgv: readonly string[],
  env: NodeJS.ProcessEnv,
  cluster: ClusterInfo | null,
  table: TorchrunTable = UNION_TABLE,
): JobShape {
  return jobShapeOf(parseTorchrunArgs(torchrunArgv, table), env, cluster);
}

/** The same, from torchrun's argv already parsed (the plan parses it once, for its refusals too). */
export function jobShapeOf(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  cluster: ClusterInfo | null,
): JobShape {
  checkTorchrunEnvironment(args, env);

  const standalone = torchrunFlag(args, env, 'standalone');
  // --standalone is one node on localhost by definition: what the cluster
  // says about a multi-node job would only make torchrun wait for nodes that
  // never come.
  const filling = standalone ? null : cluster;
  const nnodes = readNodeCount(args, env, filling);
  const localC10d = !standalone && becomesLocalC10d(args, env, filling, nnodes.max);
  const rdzvBackend = standalone || localC10d ? 'c10d' : readBackend(args, env);

  const isHost = readRendezvousHost(args, env, rdzvBackend);
  const lastCallTimeoutS = readLastCall(args, env) ?? args.table.defaults.lastCallTimeoutS;
  // Like --standalone, 2.14's local c10d makes its own endpoint on localhost:0.
  const master = readMaster(
    args,
    env,
    { backend: rdzvBackend, standalone: standalone || localC10d },
    filling,
  );
  const nodeRank = readNodeRank(args, env, filling, rdzvBackend === 'static');

  const fill: Record<string, string> = { ...master.fill };
  if (nnodes.fromCluster) fill.PET_NNODES = nnodes.value;
  if (nodeRank?.fromCluster) fill.PET_NODE_RANK = String(nodeRank.value);

  const filled = Object.keys(fill).length > 0;
  const shape: JobShape = {
    rdzvBackend,
    master: master.master,
    masterAddr: master.masterAddr,
    nnodes: { min: nnodes.min, max: nnodes.max, origin: nnodes.origin },
    nodeRank: nodeRank && { value: nodeRank.value, origin: nodeRank.origin },
    standalone,
    localAddr: readLocalAddr(args, env),
    fill,
    clusterPeers: cluster?.peers ?? [],
    cluster: cluster !== null && (filled || cluster.peers.length > 0) ? cluster.kind : null,
    controller: filling && { name: filling.controller, variables: filling.variables },
    jobId: cluster?.jobId ?? null,
    nodeName: cluster?.nodeName ?? null,
    munge: cluster?.munge ?? null,
    isHost,
    lastCallTimeoutS,
    nprocPerNode:
      torchrunSetting(args, env, 'nproc_per_node')?.value ?? args.table.defaults.nprocPerNode,
  };
  const refused = portZeroWithNodes(shape) ?? nodeRankBeyondNodes(shape);
  if (refused !== null) throw refused;
  return shape;
}

/**
 * torch 2.14's run(): with --master-port defaulting to None, a static job
 * (no --rdzv-backend or `static`) with no --rdzv-endpoint, no port and at
 * most one node becomes c10d on localhost:0, and its --master-addr is not
 * used. A port nccl-run would export (MASTER_PORT, the cluster's) counts as
 * given, as torchrun then gets it as PET_MASTER_PORT.
 */
function becomesLocalC10d(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  cluster: ClusterInfo | null,
  maxNodes: number,
): boolean {
  if (!args.table.singleNodeC10d || maxNodes > 1) return false;
  const backend = torchrunSetting(args, env, 'rdzv_backend');
  if (backend !== null && backend.value !== 'static') return false;
  if (torchrunSetting(args, env, 'rdzv_endpoint')?.value) return false;
  const port =
    torchrunSetting(args, env, 'master_port') ??
    (env.MASTER_PORT?.trim() || null) ??
    cluster?.masterPort ??
    null;
  return port === null;
}

/**
 * --rdzv-conf last_call_timeout as dynamic_rendezvous.py `_get_timeout`
 * reads it: get_as_int (Python's int()), and RendezvousTimeout refuses
 * one that is not positive.
 */
function readLastCall(args: TorchrunArgs, env: NodeJS.ProcessEnv): number | null {
  const conf = torchrunSetting(args, env, 'rdzv_conf');
  if (conf === null) return null;
  const reading = readRendezvousConfig(conf.value);
  const value = reading.problem === undefined ? reading.pairs.last_call_timeout : undefined;
  if (value === undefined) return null;
  const seconds = parsePythonInt(value);
  if (seconds === null || seconds <= 0) {
    throw badValue(
      conf.origin,
      conf.value,
      `last_call_timeout=${value} is not a positive whole number of seconds`,
    );
  }
  return seconds;
}

/**
 * run.py (2.x) `--local-addr`; an empty value is kept, as torchrun takes it
 * (and then falls back to the FQDN: `local_addr or socket.getfqdn()`).
 */
function readLocalAddr(args: TorchrunArgs, env: NodeJS.ProcessEnv): JobShape['localAddr'] {
  const setting = torchrunSetting(args, env, 'local_addr');
  return setting;
}

/** Any name but the default's is a registered backend. */
function readBackend(args: TorchrunArgs, env: NodeJS.ProcessEnv): string {
  const backend = torchrunSetting(args, env, 'rdzv_backend');
  if (backend === null) return args.table.defaults.rdzvBackend;
  if (backend.value === '') {
    throw badValue(
      backend.origin,
      backend.value,
      'expected a rendezvous backend: static, c10d, etcd, etcd-v2',
    );
  }
  return backend.value;
}

/** run.py `config_from_args` parses --rdzv-conf for every backend; only c10d reads is_host. */
function readRendezvousHost(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  backend: string,
): boolean | null {
  const conf = torchrunSetting(args, env, 'rdzv_conf');
  if (conf === null) return null;
  const reading = readRendezvousConfig(conf.value);
  if (reading.problem !== undefined) throw badValue(conf.origin, conf.value, reading.problem);
  if (backend !== 'c10d') return null;
  const isHost = readIsHost(reading.pairs);
  if (isHost !== null && typeof isHost === 'object') {
    throw badValue(conf.origin, conf.value, isHost.problem);
  }
  return isHost;
}

function readNodeCount(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  cluster: ClusterInfo | null,
): { min: number; max: number; value: string; origin: Origin; fromCluster: boolean } {
  const setting: Setting =
    torchrunSetting(args, env, 'nnodes') ??
    clusterSetting(cluster, cluster?.nnodes) ??
    defaultSetting(args.table.defaults.nnodes);
  const reading = readNnodes(setting.value);
  if (reading.problem !== undefined) throw badValue(setting.origin, setting.value, reading.problem);
  return {
    min: reading.min,
    max: reading.max,
    value: setting.value,
    origin: setting.origin,
    fromCluster: setting.origin.from === 'cluster',
  };
}

/** Only the static backend uses --node-rank; elastic ones assign ranks. */
function readNodeRank(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  cluster: ClusterInfo | null,
  isStatic: boolean,
): { value: number; origin: Origin; fromCluster: boolean } | null {
  const setting =
    torchrunSetting(args, env, 'node_rank') ??
    clusterSetting(cluster, cluster?.nodeRank) ??
    (isStatic ? defaultSetting(String(args.table.defaults.nodeRank)) : null);
  if (setting === null) return null;
  const value = parsePythonInt(setting.value);
  if (value === null || value < 0) {
    throw badValue(setting.origin, setting.value, 'expected a node rank, 0 or more');
  }
  return { value, origin: setting.origin, fromCluster: setting.origin.from === 'cluster' };
}
