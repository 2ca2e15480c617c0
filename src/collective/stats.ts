/**
 * The few statistics the collective's verdict uses (verdict.ts): the median
 * of the others for the slow-link rule, mean and standard deviation for the
 * gentler outlier rule. Population standard deviation: the nodes measured
 * are the whole job, not a sample of it.
 */

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function standardDeviation(values: readonly number[]): number | null {
  const average = mean(values);
  if (average === null) return null;
  return Math.sqrt(mean(values.map((value) => (value - average) ** 2)) as number);
}
