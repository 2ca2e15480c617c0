/**
 * What the miniature's program (templates/collective.py) writes on each
 * node: one JSON line, the same on every node since every rank gathered
 * every other's figures. Read with zod: it comes from another process, and
 * a torch that changed under us must fail with a message, not a NaN.
 */
import * as z from 'zod/mini';
import '../zod-english.js';

const seconds = z.number().check(z.minimum(0));
const count = z.number().check(z.int(), z.minimum(0));

const member = z.object({
  rank: count,
  localRank: count,
  /** torchrun's GROUP_RANK: the node's index in this rendezvous. */
  node: count,
  /** nccl-run's name of the node (Slurm's, else the hostname), as the probe knows it. */
  name: z.string(),
  /** The address nccl-run chose on that node. */
  address: z.string(),
  host: z.string(),
  pid: count,
});

export const collectiveResultSchema = z.object({
  v: z.literal(1),
  backend: z.enum(['nccl', 'gloo']),
  torch: z.string(),
  ranks: count.check(z.minimum(1)),
  /** Per size: the slowest rank's time for one all-reduce. */
  allReduce: z.array(z.object({ bytes: count, seconds })),
  members: z.array(member),
  /** The ring pass: node `from`'s first rank sent `bytes` to node `to`'s in `seconds` (best of its rounds). */
  sends: z.array(z.object({ from: count, to: count, bytes: count, seconds })),
  /** This node's first rank: how long each part took. */
  phases: z.object({
    importS: seconds,
    initS: seconds,
    allReduceS: seconds,
    ringS: seconds,
  }),
});

export type CollectiveResult = z.output<typeof collectiveResultSchema>;
export type RankMember = CollectiveResult['members'][number];

/** The result, or what was wrong with the line. */
export function parseCollectiveResult(
  text: string,
): { ok: true; result: CollectiveResult } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `not JSON (${(error as Error).message})` };
  }
  const parsed = collectiveResultSchema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, problem: parsed.error.issues.map((issue) => issue.message).join('; ') };
  }
  return { ok: true, result: parsed.data };
}
