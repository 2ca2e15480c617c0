/**
 * SPEC --nccl-log DIR: the job's NCCL writes its INFO lines to a file per
 * process in DIR, for `nccl-run audit DIR`, and stdout stays the job's. A
 * user's own NCCL_DEBUG* is kept; where it hides what audit reads, the user
 * hears what is missing and why.
 *
 * What audit reads, by NCCL's subsystem masks (the INFO() flags at
 * NVIDIA/nccl v2.18.6-1 .. v2.29.7-1): `Using network` is INIT (init.cc);
 * the socket and IB device lists, the plugin lines and the channels are
 * INIT|NET (transport/net_socket.cc, net_ib.cc, net.cc, plugin/), so INIT
 * shows them; the bootstrap line is INIT up to 2.22 and BOOTSTRAP from
 * 2.23 (bootstrap.cc); the settings' echo is ENV; the version is printed
 * under any mask. debug.cc reads NCCL_DEBUG_SUBSYS as a comma list, `^`
 * first inverting it, ALL for every subsystem, case-insensitive.
 */

/** What --nccl-log exports besides the file. */
export const NCCL_LOG_DEBUG = {
  NCCL_DEBUG: 'INFO',
  NCCL_DEBUG_SUBSYS: 'INIT,BOOTSTRAP,NET,ENV',
} as const;

/** debug.cc expands %h to the host name and %p to the pid: one file per process. */
export function ncclLogFile(dir: string): string {
  return `${dir.replace(/\/+$/, '')}/%h.%p.log`;
}

/** The subsystems audit needs, and what each one's lines are. */
const NEEDED: readonly [subsystem: string, lines: string][] = [
  ['INIT', 'the `Using network` line and, with it, the devices and channels'],
  ['BOOTSTRAP', 'the bootstrap interface, which NCCL 2.23 and later log under BOOTSTRAP'],
];

/** Whether NCCL's mask from `list` (debug.cc's reading) holds `subsystem`. */
export function subsystemShown(list: string, subsystem: string): boolean {
  const inverted = list.startsWith('^');
  const names = (inverted ? list.slice(1) : list)
    .split(',')
    .map((name) => name.trim().toUpperCase());
  const named = names.includes(subsystem) || names.includes('ALL');
  return inverted ? !named : named;
}

/**
 * Under --nccl-log, a warning for each way the job's NCCL_DEBUG or
 * NCCL_DEBUG_SUBSYS (the user's, kept, or --nccl-debug's) hides what audit reads.
 */
export function ncclLogWarnings(
  ncclLog: string | null | undefined,
  set: Readonly<Record<string, string>>,
  kept: Readonly<Record<string, string>>,
): string[] {
  if (!ncclLog) return [];
  const whose = (name: string) => (kept[name] !== undefined ? ' (yours, kept)' : '');
  const warnings: string[] = [];
  const level = kept.NCCL_DEBUG ?? set.NCCL_DEBUG;
  if (level !== undefined && !['INFO', 'TRACE'].includes(level.toUpperCase())) {
    warnings.push(
      `NCCL_DEBUG=${level}${whose('NCCL_DEBUG')} hides what \`nccl-run audit\` reads under --nccl-log: NCCL logs its interfaces, devices and network only at INFO; --force sets INFO`,
    );
  }
  const list = kept.NCCL_DEBUG_SUBSYS ?? set.NCCL_DEBUG_SUBSYS;
  if (list !== undefined) {
    const missing = NEEDED.filter(([subsystem]) => !subsystemShown(list, subsystem));
    if (missing.length > 0) {
      warnings.push(
        `NCCL_DEBUG_SUBSYS=${list}${whose('NCCL_DEBUG_SUBSYS')} leaves out ${missing.map(([s]) => s).join(' and ')}, so \`nccl-run audit\` will not see ${missing.map(([, lines]) => lines).join(', nor ')}; --force sets ${NCCL_LOG_DEBUG.NCCL_DEBUG_SUBSYS}`,
      );
    }
  }
  return warnings;
}
