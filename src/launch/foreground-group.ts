/**
 * Whether the terminal's own signals already reach the launcher. A terminal
 * sends the signal of a special key (Ctrl-C → SIGINT, Ctrl-\ → SIGQUIT;
 * termios VINTR/VQUIT) to every process of its foreground process group
 * (POSIX "General Terminal Interface", 11.1.9). Linux only: read from
 * /proc/PID/stat, where pgrp is field 5 and tpgid field 8 (proc(5)).
 */
import { readFileSync } from 'node:fs';

interface ProcessGroups {
  /** The process's group. */
  pgrp: number;
  /** The foreground group of its controlling terminal; -1 without one. */
  tpgid: number;
}

function readProcessGroups(pid: number | 'self'): ProcessGroups | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may hold spaces and parentheses: count from its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pgrp: Number(fields[2]), tpgid: Number(fields[5]) };
  } catch {
    return undefined;
  }
}

/**
 * True when nccl-run and the launcher are both in the terminal's foreground
 * process group, so a SIGINT or SIGQUIT that nccl-run receives may have come
 * from the terminal, which delivered it to the launcher at the same moment.
 * False without /proc, without a terminal, in a background job, or when the
 * launcher moved to a group of its own: then only a kill(1) can reach us.
 */
export function sharesTerminalForeground(launcherPid: number): boolean {
  const self = readProcessGroups('self');
  const launcher = readProcessGroups(launcherPid);
  if (self === undefined || launcher === undefined || self.tpgid <= 0) return false;
  return self.pgrp === self.tpgid && launcher.pgrp === self.tpgid;
}
