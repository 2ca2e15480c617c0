/**
 * What an NCCL version does: every record of releases.ts up to it, folded
 * over what releases before every record do; an unknown version does what
 * the newest does. Each set of interface rules is named by the releases it
 * holds for (`2.18-2.27`, `2.28+`), as SPEC and explain --json give it.
 */
import { atLeast, majorMinor, versionParts } from '../version-order.js';
import {
  type InterfaceRules,
  NCCL_BEFORE_RECORDS,
  NCCL_OLDEST_MODELLED,
  NCCL_RELEASES,
  type NcclBehaviour,
} from './releases.js';

/** The interface rules' name: the releases they hold for. */
export type NcclRules = string;

export function ncclBehaviour(version: string | null): NcclBehaviour {
  return Object.assign(
    { ...NCCL_BEFORE_RECORDS },
    ...NCCL_RELEASES.filter((release) => version === null || atLeast(version, release.version)).map(
      (release) => release.sets,
    ),
  );
}

/**
 * What the NCCL the job loads may do: its version's behaviour, or, for an
 * unknown version, every behaviour nccl-run knows (oldest first), for the
 * checks that must hold for whichever loads.
 */
export function ncclBehaviours(version: string | null): NcclBehaviour[] {
  if (version !== null) return [ncclBehaviour(version)];
  return [
    { ...NCCL_BEFORE_RECORDS },
    ...NCCL_RELEASES.map((release) => ncclBehaviour(release.version)),
  ];
}

/**
 * Each set of interface rules with its name: from the release that set it
 * (the first record's, for the rules before every record) to the minor
 * release before the next set, or `+` for the newest.
 */
const NAMED_RULES: readonly { name: NcclRules; rules: InterfaceRules }[] = (() => {
  const sets = [
    { since: NCCL_OLDEST_MODELLED, rules: NCCL_BEFORE_RECORDS.interfaceRules },
    ...NCCL_RELEASES.flatMap((release) =>
      release.sets.interfaceRules === undefined
        ? []
        : [{ since: release.version, rules: release.sets.interfaceRules }],
    ),
  ];
  return sets.map(({ since, rules }, index) => {
    const next = sets[index + 1];
    return {
      name: `${majorMinor(since)}${next === undefined ? '+' : `-${minorBefore(next.since)}`}`,
      rules,
    };
  });
})();

/** `2.28.3` → `2.27`: the last minor release before it (of the same major). */
function minorBefore(version: string): string {
  const [major = 0, minor = 0] = versionParts(version);
  return minor > 0 ? `${major}.${minor - 1}` : `${major - 1}.x`;
}

/** The name of the interface rules NCCL `version` follows; an unknown one, the newest's. */
export function ncclRules(version: string | null): NcclRules {
  const rules = ncclBehaviour(version).interfaceRules;
  return (NAMED_RULES.find((named) => named.rules === rules) as (typeof NAMED_RULES)[number]).name;
}

/** Whether nccl-run models NCCL `version` (null: unknown, the newest's rules apply). */
export function olderThanModelled(version: string | null): boolean {
  return version !== null && !atLeast(version, NCCL_OLDEST_MODELLED);
}

/** The interface rules a name stands for. */
export function interfaceRules(name: NcclRules): InterfaceRules {
  const named = NAMED_RULES.find((entry) => entry.name === name);
  if (named === undefined) throw new Error(`no NCCL interface rules named '${name}'`);
  return named.rules;
}
