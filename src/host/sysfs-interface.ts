/**
 * One interface's attributes from /sys/class/net/IF (Documentation/ABI/testing/sysfs-class-net).
 * Every attribute may be missing or unreadable (carrier and speed fail with
 * EINVAL while the link is down; a container may not mount /sys): each one
 * then reads as null, never as an error.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SysfsKindSignals } from './interface-kind.js';

export interface SysfsInterface {
  name: string;
  ifindex: number | null;
  operstate: string | null;
  carrier: boolean | null;
  speedMbps: number | null;
  mtu: number | null;
  /** The bond or bridge this interface is enslaved to (the `master` link). */
  master: string | null;
  signals: SysfsKindSignals;
}

export async function readSysfsInterface(sysRoot: string, name: string): Promise<SysfsInterface> {
  const dir = join(sysRoot, 'class/net', name);
  const entries = new Set(await readdir(dir).catch(() => []));
  // Only attributes the directory lists are opened: fewer failing syscalls on big hosts.
  const read = (file: string): Promise<string | null> =>
    entries.has(file)
      ? readFile(join(dir, file), 'utf8').then(
          (text) => text.trim(),
          () => null,
        )
      : Promise.resolve(null);
  const [operstate, carrier, speed, mtu, type, ifindex, iflink, uevent, master] = await Promise.all(
    [
      read('operstate'),
      read('carrier'),
      read('speed'),
      read('mtu'),
      read('type'),
      read('ifindex'),
      read('iflink'),
      read('uevent'),
      entries.has('master') ? readlink(join(dir, 'master')).then(basename, () => null) : null,
    ],
  );
  const index = integerOrNull(ifindex);
  const linkIndex = integerOrNull(iflink);
  const speedMbps = integerOrNull(speed);
  return {
    name,
    ifindex: index,
    operstate,
    carrier: carrier === null ? null : carrier === '1',
    // The kernel prints SPEED_UNKNOWN as -1 (ethtool's convention); 0 means no link either.
    speedMbps: speedMbps !== null && speedMbps > 0 ? speedMbps : null,
    mtu: integerOrNull(mtu),
    master,
    signals: {
      arphrdType: integerOrNull(type),
      devtype: uevent?.match(/^DEVTYPE=(.+)$/m)?.[1] ?? null,
      hasDevice: entries.has('device'),
      hasBonding: entries.has('bonding'),
      hasBondingSlave: entries.has('bonding_slave'),
      hasBridge: entries.has('bridge'),
      hasTunFlags: entries.has('tun_flags'),
      hasLower: [...entries].some((entry) => entry.startsWith('lower_')),
      ridesOnOther: index !== null && linkIndex !== null && index !== linkIndex,
    },
  };
}

function integerOrNull(text: string | null): number | null {
  if (text === null || !/^-?\d+$/.test(text)) return null;
  return Number(text);
}
