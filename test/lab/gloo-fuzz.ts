/**
 * The real Gloo's device address on the fuzz's hosts (issue 38 item 5): the
 * torch 2.6 of Debian 13's root makes each case's device in one Python
 * process (gloo-device.py: torch imported once, a forked child per case,
 * each in its host's network namespace with its hostname and /etc/hosts),
 * under the LD_PRELOAD shim of gloo-oracle.ts, whose log says where each
 * device listens. What Gloo binds depends on the hostname's resolution and
 * GLOO_SOCKET_IFNAME, not on a second rank, so one process answers for
 * every layout in a few seconds.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CHECKOUT } from './debian-root.js';
import { buildShim, listensByCase } from './gloo-oracle.js';
import type { Lab } from './netns.js';

export interface GlooDeviceCase {
  id: string;
  /** The Lab host (namespace) the device is made in. */
  host: string;
  hostname: string;
  etcHosts: string;
  /** Unset: the hostname's device; else the first name's. */
  GLOO_SOCKET_IFNAME?: string;
}

export interface GlooDevice {
  /** The address Gloo's device listened on; null where torch made no device. */
  address: string | null;
  /** "ok", or the exception's class and first line. */
  outcome: string;
}

/** Each case's device, made by the torch in the Debian root `root`. */
export async function glooDevices(
  lab: Lab,
  root: string,
  cases: readonly GlooDeviceCase[],
): Promise<Map<string, GlooDevice>> {
  const dir = buildShim();
  try {
    mkdirSync(join(dir, 'netns'));
    copyFileSync(join(CHECKOUT, 'test/lab/gloo-device.py'), join(dir, 'gloo-device.py'));
    const input = cases.map((entry, index) => {
      writeFileSync(join(dir, `hosts-${index}`), entry.etcHosts);
      return {
        id: entry.id,
        netns: `/mnt/netns/${lab.ns(entry.host)}`,
        hostname: entry.hostname,
        hosts: `/mnt/hosts-${index}`,
        ...(entry.GLOO_SOCKET_IFNAME === undefined
          ? {}
          : { GLOO_SOCKET_IFNAME: entry.GLOO_SOCKET_IFNAME }),
      };
    });
    // The root's /proc, /sys and /dev, the shim folder at /mnt and the machine's namespaces under it.
    const script = [
      'r=$1 d=$2',
      'mount --rbind /proc "$r/proc"',
      'mount --rbind /sys "$r/sys"',
      'mount --rbind /dev "$r/dev"',
      'mount --bind "$d" "$r/mnt"',
      'mount --rbind /run/netns "$r/mnt/netns"',
      'exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LD_PRELOAD=/mnt/gloo-shim.so GLOO_SHIM_LOG=/mnt/shim.log /usr/bin/python3 /mnt/gloo-device.py',
    ].join(' && ');
    const run = await execa(
      'unshare',
      ['--mount', '--uts', '--propagation', 'private', 'sh', '-c', script, 'sh', root, dir],
      { input: JSON.stringify(input), reject: false, all: true, timeout: 120_000 },
    );
    const outcomes = new Map(
      String(run.stdout)
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { case: string; outcome?: string })
        .map((line) => [line.case, line.outcome]),
    );
    if (outcomes.size !== cases.length || [...outcomes.values()].includes(undefined)) {
      throw new Error(`Gloo's devices were not all made:\n${String(run.all)}`);
    }
    const listens = listensByCase(readFileSync(join(dir, 'shim.log'), 'utf8'), -1);
    return new Map(
      cases.map((entry) => {
        const outcome = outcomes.get(entry.id) ?? '?';
        const address = outcome === 'ok' ? (listens.get(entry.id)?.[0] ?? null) : null;
        return [entry.id, { address, outcome }];
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
