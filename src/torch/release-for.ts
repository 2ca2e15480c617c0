import { compareVersions, majorMinor, versionParts } from '../version-order.js';
import { TORCH_RELEASES, type TorchRelease } from './releases.js';

/**
 * The record whose rules a torch follows: its major.minor's, else, for a
 * version with no record of its own, the newest record of its major version
 * at or below it, else that major's oldest (2.3 follows 2.6: no 2.0-2.5 was
 * at hand to read, and their rules are 2.x's as far as their source history
 * says), else the newest record below it (3.0 follows 2.14), else the
 * oldest; null for an unknown version.
 */
export function releaseFor(version: string | null): TorchRelease | null {
  const wanted = version === null ? null : majorMinor(version);
  if (wanted === null) return null;
  const exact = TORCH_RELEASES.find((release) => release.version === wanted);
  if (exact !== undefined) return exact;
  const atOrBelow = (releases: readonly TorchRelease[]) =>
    releases.filter((release) => compareVersions(release.version, wanted) <= 0).at(-1);
  const major = versionParts(wanted)[0];
  const sameMajor = TORCH_RELEASES.filter((release) => versionParts(release.version)[0] === major);
  return (
    atOrBelow(sameMajor) ??
    sameMajor[0] ??
    atOrBelow(TORCH_RELEASES) ??
    (TORCH_RELEASES[0] as TorchRelease)
  );
}

/** The newest record: what current images ship, whose rules an unknown torch is read by. */
export const NEWEST_TORCH = TORCH_RELEASES.at(-1) as TorchRelease;

/** The record a torch follows, the newest for an unknown one. */
export function rulesFor(version: string | null): TorchRelease {
  return releaseFor(version) ?? NEWEST_TORCH;
}
