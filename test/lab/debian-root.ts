/**
 * The lab's real stacks (shared/LAB.md): Debian 13's torch 2.6 and NCCL 2.22,
 * Debian 12's torch 1.13, each in a Debian root that lab-root.sh builds once
 * and caches outside the checkout (or the host itself when it is that
 * release). A command runs "in" a root on a lab host as
 *
 *   ip netns exec NS unshare --uts -m sh -c '...; exec chroot ROOT CMD'
 *
 * exec'ing at every step, so the pid a test holds is CMD's and the signals it
 * sends are the ones CMD gets. The mount namespace binds into the root what
 * a process there needs: /proc, /sys (the network namespace's own), /dev,
 * the host's /etc/hosts (the namespace's, from /etc/netns/NS/hosts) and this
 * checkout at its own path, so fixture scripts keep their paths.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Suite = 'trixie' | 'bookworm' | 'sid';

const LAB_ROOT_SCRIPT = fileURLToPath(new URL('./lab-root.sh', import.meta.url));
export const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/**
 * A lab's own TMPDIR, inside the checkout's .lab-tmp, where a lab root's
 * chroot sees it at the same path (torchrun-in-root.sh binds the checkout):
 * torchrun's agent makes its log folder there (torchelastic_*, never
 * removed). The lab removes it when it ends.
 */
export function labTmpDir(prefix: string): string {
  mkdirSync(join(CHECKOUT, '.lab-tmp'), { recursive: true });
  return mkdtempSync(join(CHECKOUT, '.lab-tmp', prefix));
}

/**
 * LAB WORKAROUND, never product behaviour: Debian's torch 2.6 is built
 * without libuv yet TCPStore defaults to use_libuv=True, so every rendezvous
 * fails (pytorch/pytorch#148283). This folder's sitecustomize.py makes the
 * default False; it reaches Python only through the PYTHONPATH that
 * `torch26Env` gives the lab's torchrun.
 */
export const LIBUV_WORKAROUND_PATH = fileURLToPath(new URL('./python', import.meta.url));

/** The environment torchrun 2.6 needs in the lab (the libuv workaround). */
export const torch26Env: Readonly<Record<string, string>> = {
  PYTHONPATH: LIBUV_WORKAROUND_PATH,
  USE_LIBUV: '0',
};

const roots = new Map<Suite, { path: string } | { error: string }>();

/**
 * The root of a suite, built on first use (a minute or two, once per machine);
 * an error message when it cannot be had here (not root, no debootstrap, no
 * network to Debian's mirror).
 */
export function labRoot(suite: Suite): { path: string } | { error: string } {
  const known = roots.get(suite);
  if (known) return known;
  let found: { path: string } | { error: string };
  if (process.getuid?.() !== 0) {
    found = { error: `the ${suite} lab root needs root (debootstrap, chroot; CI runs as root)` };
  } else {
    try {
      const path = execFileSync('bash', [LAB_ROOT_SCRIPT, suite], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        timeout: 15 * 60_000,
      }).trim();
      found = { path };
    } catch (error) {
      found = { error: `the ${suite} lab root could not be built: ${(error as Error).message}` };
    }
  }
  roots.set(suite, found);
  return found;
}

/**
 * argv that runs `command` inside `root` with the given hostname, to be run
 * in a network namespace (`ip netns exec NS ...argv`). For root '/', only the
 * hostname changes. `binds` are more folders to mount in the root
 * (outside, inside), besides the checkout.
 */
export function inRoot(
  root: string,
  hostname: string,
  command: string,
  args: readonly string[],
  binds: readonly (readonly [string, string])[] = [],
): string[] {
  const enter =
    root === '/'
      ? 'exec "$@"'
      : [
          'mount --rbind /proc "$r/proc"',
          'mount --rbind /sys "$r/sys"',
          'mount --rbind /dev "$r/dev"',
          'mount --bind /etc/hosts "$r/etc/hosts"',
          `mkdir -p "$r${CHECKOUT}"`,
          `mount --bind ${CHECKOUT} "$r${CHECKOUT}"`,
          ...binds.map(([outside, inside]) => `mount --bind ${outside} "$r${inside}"`),
          'exec chroot "$r" "$@"',
        ].join(' && ');
  return [
    'unshare',
    '--uts',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    `hostname "$1" && r=$2 && shift 2 && ${enter}`,
    'sh',
    hostname,
    root,
    command,
    ...args,
  ];
}
