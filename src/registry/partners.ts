/**
 * Who meshes with whom (SPEC "Verification": "above a size it dials ring
 * neighbours plus a sample, and says so"). Up to FULL_MESH_MAX_NODES every
 * node dials every other, as an all-to-all collective would connect them.
 * Above, each node's partners are its two ring neighbours (NCCL's bootstrap
 * ring and the ring all-reduce connect exactly those) and a pseudo-random
 * sample; the relation is symmetric, so a node expects to be dialled by
 * exactly the nodes it dials. The ring keeps the graph connected; the
 * sample crosses racks and switches the ring would not; every node's own
 * ports and path are still tried by some 64 others.
 *
 * The bound is set by the registry's answer, not by the mesh: a full roster
 * is N members sent to each of N nodes, N² lines of about 120 bytes: 8 MB
 * from the master at 256 nodes, 126 MB at 1,024, 2 GB at 4,096, each node
 * parsing N of them; a sampled one is about 64 per node whatever N.
 */
export const FULL_MESH_MAX_NODES = 256;
/** Sampled partners each node adds (so about twice as many in all, the relation being symmetric). */
export const SAMPLED_PARTNERS = 31;

/**
 * The partners of every node above FULL_MESH_MAX_NODES, by ring index:
 * partners[i] ascending, never i itself, and j in partners[i] exactly when
 * i is in partners[j].
 */
export function sampledPartners(nodes: number, seed: number): number[][] {
  const edges = Array.from({ length: nodes }, () => new Set<number>());
  const join = (a: number, b: number) => {
    if (a === b) return;
    edges[a]?.add(b);
    edges[b]?.add(a);
  };
  for (let i = 0; i < nodes; i += 1) {
    join(i, (i + 1) % nodes);
    for (let draw = 0; draw < SAMPLED_PARTNERS; draw += 1) {
      join(i, (i + 1 + (mix(seed, i, draw) % (nodes - 1))) % nodes);
    }
  }
  return edges.map((set) => [...set].sort((a, b) => a - b));
}

/**
 * A 32-bit hash of (seed, i, draw): murmur3's finaliser over a simple
 * combination. Every registry computes the same sample from the same seed,
 * and the seed comes from the job's token, so two jobs sample differently.
 */
function mix(seed: number, i: number, draw: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(draw + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
