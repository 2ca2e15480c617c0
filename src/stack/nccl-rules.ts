/**
 * What each NCCL version does that nccl-run models, in one place: a record
 * per rule set, found by the version of the NCCL that will load
 * (read-stack.ts). Read at the source, NVIDIA/nccl by tag, and held to the
 * real libraries by the oracle tier (2.22.3 from Debian 13, 2.29.7 from
 * Debian sid): src/misc/socket.cc ncclFindInterfaces (src/os/linux.cc
 * ncclOsFindInterfaces from v2.29), src/misc/param.cc, src/plugin/env.cc.
 * A new NCCL that changes them is one more entry here, and its name in
 * NcclRules.
 */

/** The rule sets' names, as SPEC and explain --json give them. */
export type NcclRules = '2.19-2.27' | '2.28+';

export interface NcclRuleSet {
  /** The first version the set holds for (older NCCLs get the oldest set). */
  since: string;
  /**
   * ncclFindInterfaces' lists when NCCL_SOCKET_IFNAME is unset (or one
   * character long), tried in turn until one finds an interface.
   */
  defaultIfnames: readonly string[];
  /**
   * Every address of an interface without IFF_RUNNING (down, or no
   * carrier) is skipped, also under the user's own list (v2.28.3-1).
   */
  skipsNotRunning: boolean;
  /**
   * The version from which NCCL loads an env plugin (libnccl-env.so found
   * by dlopen, or the one NCCL_ENV_PLUGIN names) that can supply its
   * variables where nccl-run cannot see them (v2.28.7-1); null: never.
   */
  envPluginSince: string | null;
}

export const NCCL_RULES: Readonly<Record<NcclRules, NcclRuleSet>> = {
  '2.19-2.27': {
    since: '2.19.0',
    defaultIfnames: ['ib', '^docker,lo', 'docker', 'lo'],
    skipsNotRunning: false,
    envPluginSince: null,
  },
  '2.28+': {
    since: '2.28.0',
    // v2.28.3-1 excludes virbr with docker and lo, and tries it last.
    defaultIfnames: ['ib', '^docker,lo,virbr', 'docker', 'lo', 'virbr'],
    skipsNotRunning: true,
    envPluginSince: '2.28.7',
  },
};

/** The rules of NCCL "X.Y.Z"; unknown (null) gets the newest. */
export function ncclRules(version: string | null): NcclRules {
  const names = Object.keys(NCCL_RULES) as NcclRules[];
  if (version === null) return names[names.length - 1] as NcclRules;
  return (
    names.filter((name) => atLeast(version, NCCL_RULES[name].since)).pop() ??
    (names[0] as NcclRules)
  );
}

/** Whether version "X.Y.Z" is `since` or later. */
export function atLeast(version: string, since: string): boolean {
  const [a, b] = [version, since].map((v) => v.split('.').map(Number)) as [number[], number[]];
  for (let i = 0; i < 3; i += 1) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff > 0;
  }
  return true;
}
