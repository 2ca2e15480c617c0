/**
 * Release versions in order, for torch's and NCCL's records alike
 * (torch/releases.ts, nccl/releases.ts): dotted numbers compared part by
 * part, a missing part as 0 (`2.28` is `2.28.0`), anything after the
 * numbers (`+cu130`, `a0`, `-1`) ignored.
 */

/** The leading dotted numbers of a version: `2.14.1+cu130` → [2, 14, 1]; [] when it has none. */
export function versionParts(version: string): number[] {
  return (/^\d+(?:\.\d+)*/.exec(version)?.[0] ?? '').split('.').filter(Boolean).map(Number);
}

/** Negative, zero or positive as `a` is older than, the same as, or newer than `b`. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [versionParts(a), versionParts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    const diff = (x[i] ?? 0) - (y[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Whether `version` is `since` or newer. */
export function atLeast(version: string, since: string): boolean {
  return compareVersions(version, since) >= 0;
}

/** `2.6.0+debian` → `2.6`; null when the version does not start with major.minor. */
export function majorMinor(version: string): string | null {
  const [major, minor] = versionParts(version);
  return major === undefined || minor === undefined ? null : `${major}.${minor}`;
}
