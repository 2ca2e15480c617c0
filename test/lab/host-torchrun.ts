/**
 * The host's own torchrun, /usr/bin/torchrun (shared/LAB.md): Debian 12's
 * python3-torch (torch 1.13, Python 3.11) or, on a Debian 13 machine, Debian
 * 13's (torch 2.6, Python 3.13). Tests that run torch's Python directly take
 * the interpreter from torchrun's `#!` line rather than naming one, so they
 * run on either release.
 */
import { existsSync, readFileSync } from 'node:fs';

export const HOST_TORCHRUN = '/usr/bin/torchrun';

/** The interpreter on a torchrun's `#!` line (e.g. /usr/bin/python3.11); null without one. */
export function torchrunInterpreter(torchrun: string = HOST_TORCHRUN): string | null {
  if (!existsSync(torchrun)) return null;
  const line = readFileSync(torchrun, 'utf8').split('\n', 1)[0] ?? '';
  return /^#!\s*(\S+)/.exec(line)?.[1] ?? null;
}

/**
 * The torch version, MAJOR.MINOR, a torchrun entry script names (Debian's
 * carry `torch==1.13.0a0+gitunknown`, `torch==2.6.0+debian`); null when
 * there is no such script or it names none.
 */
export function torchrunVersion(torchrun: string = HOST_TORCHRUN): string | null {
  if (!existsSync(torchrun)) return null;
  return /torch==(\d+\.\d+)/.exec(readFileSync(torchrun, 'utf8'))?.[1] ?? null;
}
