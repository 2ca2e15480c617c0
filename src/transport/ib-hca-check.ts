/**
 * Checks of a user's NCCL_IB_HCA against the ports here (SPEC "RDMA
 * transport"), by NCCL's own matching (ib-hca.ts): an entry that matches
 * more devices than its name (mlx5_1 also takes mlx5_10: a prefix
 * collision), an entry that matches nothing, a named port NCCL skips (down,
 * or a link layer its IB transport does not use) are warnings; a list that
 * selects no port at all is a ConfigError (78), since NCCL would then quietly
 * run on sockets. The warnings name the entries and the fix.
 */
import { ConfigError } from '../errors.js';
import type { RdmaFacts } from '../host/host-facts.js';
import { entryMatches, ncclIfnameMatches } from '../nccl/nccl-ifname.js';
import { type Origin, whereSet } from '../origin.js';
import { entryText, parseIbHca } from './ib-hca.js';
import type { IbSettings } from './ib-settings.js';
import { portLabel, portSkipped } from './transport-verdict.js';

/** from: where NCCL_IB_HCA was set. */
export function checkIbHca(rdma: RdmaFacts, settings: IbSettings, from: Origin): string[] {
  const value = settings.hca;
  if (value === null) return [];
  const setting = `NCCL_IB_HCA='${value}' (set in ${whereSet(from)})`;
  const ports = rdma.devices.flatMap((device) =>
    device.ports.map((port) => ({
      name: device.name,
      port: port.port,
      skipped: portSkipped(port),
    })),
  );
  if (ports.length === 0) return [`${setting}, but this host has no RDMA devices`];
  const list = parseIbHca(value);
  if (!ports.some((port) => ncclIfnameMatches(list, port.name, port.port))) {
    throw new ConfigError(
      `${setting} matches no RDMA port here, so NCCL would find no IB device and run on sockets; ports here: ${ports.map(portLabel).join(', ')}`,
    );
  }
  const warnings: string[] = [];
  for (const entry of list.names) {
    const text = entryText(entry);
    const matched = ports.filter((port) => entryMatches(entry, list.exact, port.name, port.port));
    if (matched.length === 0) {
      warnings.push(
        `${setting}: '${text}' matches no RDMA port here (${ports.map(portLabel).join(', ')})`,
      );
      continue;
    }
    const others = prefixCollisions(entry.name, list.exact, matched);
    if (others.length > 0) {
      warnings.push(
        `${setting}: '${text}' also ${list.mode === 'exclude' ? 'excludes' : 'takes'} ${others.join(', ')} (NCCL matches names by prefix); start the list with '=' for exact names: NCCL_IB_HCA='${exactList(value)}'`,
      );
    }
    if (list.mode === 'exclude') continue;
    const skipped = matched.filter((port) => port.skipped !== null);
    if (skipped.length > 0) {
      warnings.push(
        `${setting}: '${text}' names ${skipped.map((port) => `${portLabel(port)} (${port.skipped})`).join(', ')}, which NCCL skips`,
      );
    }
  }
  return warnings;
}

/**
 * Devices an entry takes only because their name goes on with more digits:
 * mlx5_1 taking mlx5_10 and mlx5_11. An entry such as `mlx5` that stops
 * short of a device number is a prefix on purpose.
 */
function prefixCollisions(
  name: string,
  exact: boolean,
  matched: readonly { name: string }[],
): string[] {
  if (exact || !/\d$/.test(name)) return [];
  const names = new Set(matched.map((port) => port.name));
  return [...names].filter((device) => /^\d/.test(device.slice(name.length)));
}

/** The same list with '=' after its '^', if any. */
function exactList(value: string): string {
  return value.startsWith('^') ? `^=${value.slice(1)}` : `=${value}`;
}
