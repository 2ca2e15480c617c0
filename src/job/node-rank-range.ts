/**
 * A static rendezvous numbers its nodes 0 to --nnodes − 1, and torch takes
 * --node-rank as given (static_tcp_rendezvous.py: it is the agent's group
 * rank): rank 0 waits for the role info of every node below --nnodes, so a
 * node numbered --nnodes or more is never one of them and both wait until
 * their store times out (seen with torch 1.13: a node 0 and a node 2 of
 * `--nnodes=2`, still waiting when killed after 60 s). An elastic
 * rendezvous (c10d) numbers the nodes itself and ignores --node-rank.
 */
import { badValue, type ConfigError, type UsageError } from '../errors.js';
import type { JobShape } from './job-shape.js';

/** A static job's node rank that torch cannot place: refused before any check. */
export function nodeRankBeyondNodes(job: JobShape): UsageError | ConfigError | null {
  const { rdzvBackend, nodeRank, nnodes } = job;
  if (rdzvBackend !== 'static' || nodeRank === null || nodeRank.value < nnodes.max) return null;
  return badValue(
    nodeRank.origin,
    String(nodeRank.value),
    `the nodes of a static job of ${nnodes.max} (${nnodes.origin.name}) are ranked 0 to ${nnodes.max - 1}, and torch would wait for node ${nodeRank.value} to join until its store times out; give this node a rank below ${nnodes.max}, or the job more nodes`,
  );
}
