/**
 * The count of NCCL's socket-transport devices the source implies, on a lab
 * host's real getifaddrs() (issue 42). ncclNetSocketInit is not reachable
 * without a GPU (it runs at communicator init), and libnccl exports nothing
 * of it, so this is the oracle for everything past the first device: a
 * transcription of ncclFindInterfaces with maxIfs MAX_IFS (16), read at
 * NVIDIA/nccl v2.22.3-1 src/misc/socket.cc:101-160 and :323-357 and
 * v2.29.7-1 src/os/linux.cc:305-360 and src/misc/socket.cc:165-200, applied
 * by python3's ctypes to the glibc list in the host's own namespace: the
 * kernel's order, not nccl-run's reading of it. The first device is held to
 * the real NCCL's bootstrap line instead (nccl-fuzz.ts).
 */
import { execa } from 'execa';
import type { Lab } from './netns.js';

const SCRIPT = `
import ctypes, ctypes.util, json, socket, sys
envs, skips_not_running = json.loads(sys.argv[1]), sys.argv[2] == '1'
class sockaddr(ctypes.Structure):
    _fields_ = [('family', ctypes.c_ushort), ('data', ctypes.c_ubyte * 26)]
class ifaddrs(ctypes.Structure):
    pass
ifaddrs._fields_ = [('next', ctypes.POINTER(ifaddrs)), ('name', ctypes.c_char_p), ('flags', ctypes.c_uint),
                    ('addr', ctypes.POINTER(sockaddr)), ('netmask', ctypes.c_void_p), ('ifu', ctypes.c_void_p),
                    ('data', ctypes.c_void_p)]
libc = ctypes.CDLL(ctypes.util.find_library('c'))
head = ctypes.POINTER(ifaddrs)()
libc.getifaddrs(ctypes.byref(head))
entries, node = [], head
while node:
    entry = node.contents
    if entry.addr:
        family = entry.addr.contents.family
        raw = bytes(entry.addr.contents.data)
        if family == socket.AF_INET:
            entries.append((entry.name.decode(), family, socket.inet_ntop(family, raw[2:6]), entry.flags))
        elif family == socket.AF_INET6:
            entries.append((entry.name.decode(), family, socket.inet_ntop(family, raw[6:22]), entry.flags))
    node = entry.next
IFF_RUNNING = 0x40
def find(prefix_list, forced, max_ifs=16):
    search_not = prefix_list.startswith('^')
    if search_not: prefix_list = prefix_list[1:]
    exact = prefix_list.startswith('=')
    if exact: prefix_list = prefix_list[1:]
    names = [entry.split(':')[0] for entry in prefix_list.split(',')][:16]
    names = [name for name in names if name]
    found = []
    for name, family, address, flags in entries:
        if skips_not_running and not flags & IFF_RUNNING: continue
        if forced != -1 and family != forced: continue
        if family == socket.AF_INET6 and address == '::1': continue
        listed = not names or any(name == n if exact else name.startswith(n) for n in names)
        if listed == search_not: continue
        if any(name == seen for seen, _ in found): continue
        found.append((name, address))
        if len(found) == max_ifs: break
    return found
def devices(env):
    forced = {'AF_INET': socket.AF_INET, 'AF_INET6': socket.AF_INET6}.get(env.get('NCCL_SOCKET_FAMILY'), -1)
    ifname = env.get('NCCL_SOCKET_IFNAME')
    if ifname is not None and len(ifname) > 1:
        return find(ifname, forced)
    defaults = ['ib', '^docker,lo,virbr', 'docker', 'lo', 'virbr'] if skips_not_running else ['ib', '^docker,lo', 'docker', 'lo']
    for prefix_list in defaults:
        found = find(prefix_list, forced)
        if found: return found
    return []
print(json.dumps([[{'interface': name, 'address': address} for name, address in devices(env)] for env in envs]))
`;

export interface SocketDevice {
  interface: string;
  address: string;
}

/**
 * The devices the source implies on `host` under each of `envs`
 * (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY; not NCCL_COMM_ID, whose step it
 * does not transcribe), for a release that skips interfaces without
 * IFF_RUNNING or not; one python3 for them all.
 */
export async function sourceDevices(
  lab: Pick<Lab, 'ns'>,
  host: string,
  envs: readonly Readonly<Record<string, string>>[],
  skipsNotRunning: boolean,
): Promise<SocketDevice[][]> {
  const { stdout } = await execa('ip', [
    'netns',
    'exec',
    lab.ns(host),
    'python3',
    '-c',
    SCRIPT,
    JSON.stringify(envs),
    skipsNotRunning ? '1' : '0',
  ]);
  return JSON.parse(stdout) as SocketDevice[][];
}
