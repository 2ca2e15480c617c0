/**
 * Which NCCL_* names an NCCL release reads: the records of nccl-params.ts
 * folded up to it, as behaviour.ts folds releases.ts. A patch release with
 * no record reads what the record before it reads (the script keeps only the
 * releases whose names changed).
 */
import { atLeast } from '../../version-order.js';
import { NCCL_PARAMETER_RECORDS } from './nccl-params.js';
import type { NcclParameterRecord } from './parameter-record.js';

/** The releases the records were read from: the first and the last tag's version. */
export const PARAMETER_RELEASES = {
  first: (NCCL_PARAMETER_RECORDS[0] as NcclParameterRecord).version,
  last: (NCCL_PARAMETER_RECORDS.at(-1) as NcclParameterRecord).tag.replace(/^v|-1$/g, ''),
};

/** Each record's whole set of names, oldest first. */
const RELEASE_NAMES: readonly { version: string; names: ReadonlySet<string> }[] = (() => {
  const folded: { version: string; names: ReadonlySet<string> }[] = [];
  let names = new Set<string>();
  for (const record of NCCL_PARAMETER_RECORDS) {
    names = new Set([...names, ...record.added]);
    for (const name of record.removed) names.delete(name);
    folded.push({ version: record.version, names });
  }
  return folded;
})();

/** Every name some release reads. */
export const EVERY_PARAMETER: ReadonlySet<string> = new Set(
  RELEASE_NAMES.flatMap((release) => [...release.names]),
);

/**
 * The names NCCL `version` reads; null where the records cannot say: the
 * version is unknown, or older than the first record.
 */
export function parametersOf(version: string | null): ReadonlySet<string> | null {
  if (version === null) return null;
  const release = RELEASE_NAMES.findLast((entry) => atLeast(version, entry.version));
  return release?.names ?? null;
}

/**
 * The releases that read `name`, as spans: from the first release that reads
 * it to the first that does not (null: still read by the newest record).
 */
export function releasesReading(name: string): { from: string; until: string | null }[] {
  const spans: { from: string; until: string | null }[] = [];
  for (const release of RELEASE_NAMES) {
    const open = spans.at(-1);
    const reading = release.names.has(name);
    if (reading && (open === undefined || open.until !== null)) {
      spans.push({ from: release.version, until: null });
    } else if (!reading && open !== undefined && open.until === null) {
      open.until = release.version;
    }
  }
  return spans;
}
