/**
 * The settings lint (SPEC "Outputs"): the user's NCCL_* variables (the
 * environment, the env file, NCCL's configuration files) judged against
 * the names each NCCL release reads (params/nccl-params.ts, read at NCCL's
 * tags) and the values it clamps (params/clamped-values.ts). A name no
 * release reads is one NCCL ignores without a word; one only some releases
 * read is judged against the release the job runs, when known. Names that
 * are not NCCL's (params/foreign-names.ts) are left alone.
 */
import { clampedValues, type SettingSeen } from './params/clamped-values.js';
import { foreignOwner } from './params/foreign-names.js';
import { nearestName } from './params/nearest-name.js';
import {
  EVERY_PARAMETER,
  PARAMETER_RELEASES,
  parametersOf,
  releasesReading,
} from './params/release-parameters.js';

export type { SettingSeen } from './params/clamped-values.js';

/**
 * Names people set that NCCL has never had, with what does the job: NCCL
 * binds its listening sockets to port 0 (src/misc/socket.cc ncclSocketListen
 * at v2.22.3-1: "addr port should be 0 (Any port)"; only NCCL_COMM_ID fixes
 * its root's port), so the kernel's ephemeral range picks them (SPEC
 * "Cluster fill-in", --port-range).
 */
const NOT_NCCL_SETTINGS: Readonly<Record<string, string>> = {
  NCCL_PORT_RANGE:
    'NCCL has no port-range setting; its sockets listen on ports the kernel picks from net.ipv4.ip_local_port_range (set it with sysctl, Docker’s --sysctl or a pod’s securityContext.sysctls)',
};

/**
 * One warning per setting NCCL ignores or changes. settings: each NCCL_*
 * variable the user set (any case), with its value and where it was set;
 * version: the NCCL the job runs, null when unknown.
 */
export function lintNcclSettings(
  settings: Readonly<Record<string, SettingSeen>>,
  version: string | null,
): string[] {
  const reads = parametersOf(version);
  const warnings: string[] = [];
  for (const [name, setting] of Object.entries(settings)) {
    const note = nameNote(name, reads, version);
    if (note !== null) warnings.push(`${name} (set in ${setting.where}): ${note}`);
  }
  return [...warnings, ...clampedValues(settings)];
}

/** What is wrong with the name; null when the job's NCCL reads it, or it is not NCCL's. */
function nameNote(name: string, reads: ReadonlySet<string> | null, version: string | null) {
  if (EVERY_PARAMETER.has(name)) return releaseNote(name, reads, version);
  // NCCL's getenv is case-sensitive; a lower-case name is the user's own
  // shell variable unless it is one of NCCL's in the wrong case.
  if (name !== name.toUpperCase()) {
    return EVERY_PARAMETER.has(name.toUpperCase())
      ? `NCCL reads ${name.toUpperCase()}, in upper case, and ignores this one`
      : null;
  }
  if (foreignOwner(name) !== null) return null;
  const invented = NOT_NCCL_SETTINGS[name];
  const span = `no NCCL release from ${PARAMETER_RELEASES.first} to ${PARAMETER_RELEASES.last} reads it`;
  if (invented !== undefined) return `${span}: ${invented}`;
  const nearest = nearestName(name, EVERY_PARAMETER, (candidate) => reads?.has(candidate) ?? false);
  return `${span}, so NCCL ignores it${nearest === null ? '' : `; did you mean ${nearest}?`}`;
}

/** A real name the job's release does not read: when NCCL reads it, and that this one does not. */
function releaseNote(name: string, reads: ReadonlySet<string> | null, version: string | null) {
  if (reads === null || reads.has(name)) return null;
  const spans = releasesReading(name);
  const phrases = spans.map(({ from, until }) => {
    if (until === null) return `from ${from} on`;
    return from === PARAMETER_RELEASES.first
      ? `until ${until} dropped it`
      : `from ${from} until ${until} dropped it`;
  });
  const verb = spans.some(({ until }) => until === null) ? 'reads' : 'read';
  return `NCCL ${verb} it ${phrases.join(' and ')}; this job's NCCL ${version} ignores it`;
}
