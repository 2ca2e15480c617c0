/**
 * NCCL_SOCKET_IFNAME as NCCL reads it (src/misc/socket.cc findInterfaces,
 * src/misc/utils.cc parseStringList / matchIfList, the same from v2.19.1-1 to
 * v2.30.7-1, where findInterfaces moved to src/os/linux.cc):
 * - a leading `^` inverts the list, then a leading `=` makes matches exact
 *   (so `^=docker0` excludes exactly docker0); nothing else is stripped, so
 *   in `=^eth1` the `^` is part of the name and the list matches nothing;
 * - entries are comma separated, empty entries are dropped;
 * - `name:port` keeps name and reads port like atoi; socket interfaces are
 *   matched with port -1, so the port never restricts an interface name;
 * - without `=`, an entry matches every interface whose name starts with it;
 * - an empty list matches every interface, so a bare `^` matches none.
 */
export interface NcclIfname {
  mode: 'include' | 'exclude';
  exact: boolean;
  names: { name: string; port?: number }[];
}

/**
 * parseStringList stops after this many entries: MAX_IFS for
 * NCCL_SOCKET_IFNAME (socket.cc), MAX_IB_DEVS (32) for NCCL_IB_HCA (net_ib.cc).
 */
const MAX_IFS = 16;

/** NCCL ignores a NCCL_SOCKET_IFNAME of one character or none (ncclFindInterfaces: strlen(env) > 1). */
export function ncclHonoursIfname(value: string): boolean {
  return value.length > 1;
}

export function parseNcclIfname(value: string, maxEntries = MAX_IFS): NcclIfname {
  let rest = value;
  const exclude = rest.startsWith('^');
  if (exclude) rest = rest.slice(1);
  const exact = rest.startsWith('=');
  if (exact) rest = rest.slice(1);

  const names: NcclIfname['names'] = [];
  for (const entry of rest.split(',')) {
    if (names.length === maxEntries) break;
    const colon = entry.indexOf(':');
    const name = colon === -1 ? entry : entry.slice(0, colon);
    if (name === '') continue;
    names.push(colon === -1 ? { name } : { name, port: atoi(entry.slice(colon + 1)) });
  }
  return { mode: exclude ? 'exclude' : 'include', exact, names };
}

/** C's atoi: leading blanks, an optional sign, digits; 0 when there are none. */
function atoi(text: string): number {
  const match = /^\s*([+-]?\d+)/.exec(text);
  return match?.[1] ? Number.parseInt(match[1], 10) : 0;
}

/**
 * matchIf and matchPort for one entry. A port of -1 on either side matches
 * any: sockets ask with -1 (so `eth0:1` is eth0), NCCL_IB_HCA with the
 * device's port.
 */
export function entryMatches(
  entry: NcclIfname['names'][number],
  exact: boolean,
  name: string,
  port = -1,
): boolean {
  const named = exact ? name === entry.name : name.startsWith(entry.name);
  return (
    named && (entry.port === undefined || entry.port === -1 || port === -1 || entry.port === port)
  );
}

/** Whether NCCL would consider this interface (or IB device port): matchIfList(...) ^ searchNot. */
export function ncclIfnameMatches(parsed: NcclIfname, name: string, port = -1): boolean {
  const listed =
    parsed.names.length === 0 ||
    parsed.names.some((entry) => entryMatches(entry, parsed.exact, name, port));
  return parsed.mode === 'exclude' ? !listed : listed;
}
