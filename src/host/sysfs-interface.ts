/**
 * One interface's attributes from /sys/class/net/IF (Documentation/ABI/testing/sysfs-class-net).
 * Every attribute may be missing or unreadable (carrier and speed fail with
 * EINVAL while the link is down; a container may not mount /sys): each one
 * then reads as null, never as an error.
 *
 * Reads are synchronous on purpose. A sysfs attribute is formatted from kernel
 * memory and never waits on a disk, so the libuv thread pool adds only its
 * round trips: over 500 veths (3,507 attribute files) on this project's 2-core
 * machine, readFileSync took a median 63 ms, callback fs.readFile 268 ms,
 * FileHandle open+read 363 ms and fs/promises readFile 484 ms. The reader
 * starts iproute2 and the /proc reads first, so they still run alongside.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { attempt } from './attempt.js';
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
  /** device/vendor of its PCI function (0x1ae0 Google gVNIC, 0x1d0f AWS ENA); null for virtual links. */
  vendor: string | null;
  signals: SysfsKindSignals;
}

export function readSysfsInterface(sysRoot: string, name: string): SysfsInterface {
  const dir = join(sysRoot, 'class/net', name);
  const entries = new Set(attempt(() => readdirSync(dir)) ?? []);
  // Only attributes the directory lists are opened: fewer failing syscalls on big hosts.
  const read = (file: string): string | null =>
    entries.has(file)
      ? (attempt(() => readFileSync(join(dir, file), 'utf8').trim()) ?? null)
      : null;
  const uevent = read('uevent');
  const ifindex = integerOrNull(ueventField(uevent, 'IFINDEX') ?? read('ifindex'));
  const iflink = integerOrNull(read('iflink'));
  const carrier = read('carrier');
  const speed = integerOrNull(read('speed'));
  return {
    name,
    ifindex,
    operstate: read('operstate'),
    carrier: carrier === null ? null : carrier === '1',
    // The kernel prints SPEED_UNKNOWN as -1 (ethtool's convention); 0 means no link either.
    speedMbps: speed !== null && speed > 0 ? speed : null,
    mtu: integerOrNull(read('mtu')),
    master: entries.has('master')
      ? (attempt(() => basename(readlinkSync(join(dir, 'master')))) ?? null)
      : null,
    vendor: entries.has('device')
      ? (attempt(() => readFileSync(join(dir, 'device/vendor'), 'utf8').trim()) ?? null)
      : null,
    signals: {
      arphrdType: integerOrNull(read('type')),
      devtype: ueventField(uevent, 'DEVTYPE'),
      hasDevice: entries.has('device'),
      hasBonding: entries.has('bonding'),
      hasBondingSlave: entries.has('bonding_slave'),
      hasBridge: entries.has('bridge'),
      hasTunFlags: entries.has('tun_flags'),
      hasLower: [...entries].some((entry) => entry.startsWith('lower_')),
      ridesOnOther: ifindex !== null && iflink !== null && ifindex !== iflink,
    },
  };
}

/** /sys/class/net/IF/operstate alone: what decides whether a link's addresses are hidden from Node. */
export function readOperstate(sysRoot: string, name: string): string | null {
  return (
    attempt(() => readFileSync(join(sysRoot, 'class/net', name, 'operstate'), 'utf8').trim()) ??
    null
  );
}

/** The interface names sysfs lists; none when /sys is not mounted. */
export function readSysfsNames(sysRoot: string): string[] {
  return attempt(() => readdirSync(join(sysRoot, 'class/net'))) ?? [];
}

function ueventField(uevent: string | null, key: string): string | null {
  return uevent?.match(new RegExp(`^${key}=(.+)$`, 'm'))?.[1] ?? null;
}

function integerOrNull(text: string | null): number | null {
  if (text === null || !/^-?\d+$/.test(text)) return null;
  return Number(text);
}
