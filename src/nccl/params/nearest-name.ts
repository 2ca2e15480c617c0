/**
 * The real name a misspelt one most likely meant: the fewest single-character
 * edits (insert, delete, replace, or swap two neighbours: the optimal string
 * alignment form of Damerau-Levenshtein), within a bound that grows with the
 * name, so that a stray letter or a dropped one is caught
 * (`NCCL_NSOCS_PERTHREAD` → `NCCL_NSOCKS_PERTHREAD`) but an unrelated name
 * is not "corrected". The shared `NCCL_` prefix is not counted.
 */

const PREFIX = 'NCCL_';

/** Edits between a and b: insertions, deletions, substitutions and adjacent transpositions. */
export function editDistance(a: string, b: string): number {
  // rows[i][j]: the distance between a's first i and b's first j characters.
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      (rows[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** How many edits a name of this length may be from the one it meant: 1 to 3. */
function allowedEdits(length: number): number {
  return Math.min(3, Math.max(1, Math.floor(length / 5)));
}

/**
 * The candidate nearest to `name`, compared without the `NCCL_` prefix and
 * ignoring case; ties go to the one listed first in `preferred` order (the
 * job's release's names before others), then alphabetically. Null when none
 * is close enough.
 */
export function nearestName(
  name: string,
  candidates: Iterable<string>,
  preferred: (candidate: string) => boolean = () => false,
): string | null {
  const bare = (text: string) => (text.startsWith(PREFIX) ? text.slice(PREFIX.length) : text);
  const wanted = bare(name.toUpperCase());
  const limit = allowedEdits(wanted.length);
  let best: { name: string; edits: number; preferred: boolean } | null = null;
  for (const candidate of [...candidates].sort()) {
    const edits = editDistance(wanted, bare(candidate));
    if (edits > limit) continue;
    const isPreferred = preferred(candidate);
    if (
      best === null ||
      edits < best.edits ||
      (edits === best.edits && isPreferred && !best.preferred)
    ) {
      best = { name: candidate, edits, preferred: isPreferred };
    }
  }
  return best?.name ?? null;
}
