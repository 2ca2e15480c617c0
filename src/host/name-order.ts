/**
 * Names in natural order, eth2 before eth10 (what Intl.Collator's numeric
 * option gives), written out because creating a Collator loads ICU's
 * collation data: 10 ms of every run's start-up, measured with --cpu-prof.
 */
export function compareNames(a: string, b: string): number {
  const runsA = a.match(/\d+|\D+/g) ?? [];
  const runsB = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(runsA.length, runsB.length); i += 1) {
    const [x, y] = [runsA[i] as string, runsB[i] as string];
    const numeric = /^\d/.test(x) && /^\d/.test(y);
    const order = numeric ? Number(x) - Number(y) : x < y ? -1 : x > y ? 1 : 0;
    if (order !== 0) return order;
  }
  return runsA.length - runsB.length || (a < b ? -1 : a > b ? 1 : 0);
}
