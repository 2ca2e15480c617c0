/**
 * What one NCCL INFO or WARN message says, as a typed event. Each
 * recogniser names the format string it reads and the NVIDIA/nccl tags and
 * files it was read at; a message none of them knows is no event.
 */
import { withoutZone } from '../host/ip-address.js';

/** An interface and the address NCCL bound or listed on it (ncclSocketToString: `host<port>`). */
export interface Bound {
  interface: string;
  /** The numeric address, without an IPv6 zone. */
  address: string;
}

/** One device of NCCL's socket transport, as `NET/Socket : Using` lists it. */
export interface SocketDevice extends Bound {
  index: number;
}

/** One port of NCCL's IB transport, as `NET/IB : Using` lists it. */
export interface IbDevice {
  index: number;
  device: string;
  port: number;
  /** `IB` or `RoCE` (the port's link layer). */
  link: string;
}

export interface Channel {
  channel: number;
  from: number;
  to: number;
  /** NET channels say which side this rank is; P2P and SHM ones say nothing. */
  direction: 'send' | 'receive' | null;
  /** What follows `via`: `NET/Socket/0`, `NET/IB/0/GDRDMA`, `NET/AWS Libfabric/1(2)/GDRDMA/Shared`, `P2P/IPC`. */
  via: string;
  /** For a NET channel: the network's name (`Socket`, `IB`, a plugin's) and its device index. */
  net: { transport: string; device: number } | null;
}

export type PluginState =
  /** A net plugin's library loaded and gave its symbol (`Loaded net plugin X`). */
  | 'loaded'
  /** None installed: NCCL looked and found no file (the ordinary case without a plugin). */
  | 'absent'
  /** A plugin that is there but did not load or did not initialise: the silent fall-back. */
  | 'failed';

export type NcclEvent =
  | { kind: 'version'; version: string }
  | { kind: 'bootstrap'; bound: Bound }
  | { kind: 'socketDevices'; devices: SocketDevice[] }
  | { kind: 'ibDevices'; devices: IbDevice[] }
  | { kind: 'network'; name: string }
  | { kind: 'plugin'; state: PluginState; name: string | null }
  | { kind: 'channel'; channel: Channel }
  | { kind: 'setting'; name: string; value: string }
  | { kind: 'rank'; rank: number; nranks: number }
  | { kind: 'retry' }
  | { kind: 'warn' };

// getnameinfo's numeric host: IPv4, or IPv6 (two colons at least) with an
// optional %zone. An interface name may hold a colon (an IPv4 alias label,
// `eth0:1`), so the name ends where an address that runs up to `<port>` begins.
const ADDRESS = String.raw`(\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]*:[0-9A-Fa-f]*:[0-9A-Fa-f:.]*(?:%[^<\s]+)?)<\d+>`;
const BOUND = new RegExp(String.raw`^(?:\[\d+\])?(\S+?):${ADDRESS}$`);
const SOCKET_DEVICE = new RegExp(String.raw`\[(\d+)\](\S+?):${ADDRESS}`, 'g');
// net_ib.cc " [%d]%s:%d/%s" (v2.18.6-1 .. v2.29.7-1 net_ib/init.cc), and
// inside a merged device " [%d]={[%d] %s:%d/%s ...}" (v2.22.3-1 .. ).
const IB_DEVICE = /\[(\d+)\] ?([\w.-]+):(\d+)\/(\w+)/g;
const CHANNEL =
  /^Channel (\d+)(?:\/\d+)? : (\d+)\[[0-9a-fx]+\] -> (\d+)\[[0-9a-fx]+\](?: \[(send|receive)\])? via (.+)$/;

type Recogniser = (message: string) => NcclEvent | null;

const RECOGNISERS: Recogniser[] = [
  // init.cc VERSION_STRING "NCCL version %d.%d.%d%s+cuda%d.%d" (every tag).
  (m) => {
    const version = /^NCCL version (\d+\.\d+\.\d+)/.exec(m)?.[1];
    return version === undefined ? null : { kind: 'version', version };
  },
  // bootstrap.cc "Bootstrap : Using%s" (v2.18.6-1 .. v2.23.4-1; INIT, from
  // v2.23.4-1 subsystem BOOTSTRAP) and "Bootstrap: Using%s" (v2.24.3-1 ..
  // v2.29.7-1). 2.24+ also prints "Bootstrap: Using %s:%d" for a bootstrap
  // over a NET plugin (NCCL_OOB_NET_ENABLE): a device and port, no address,
  // which is no bound interface. Up to 2.6 the line listed `[0]lo:...`.
  (m) => {
    const using = /^Bootstrap ?: Using ?(\S+)$/.exec(m)?.[1];
    if (using === undefined) return null;
    const bound = BOUND.exec(using);
    return bound === null ? null : { kind: 'bootstrap', bound: boundOf(bound[1], bound[2]) };
  },
  // net_socket.cc "NET/Socket : Using%s" with " [%d]%s:%s" per device
  // (v2.18.6-1 .. v2.29.7-1 src/transport/net_socket.cc). "NET/Socket: Using %d
  // threads and %d sockets per thread" is another line, of no devices.
  (m) => {
    if (!/^NET\/Socket ?: Using \[/.test(m)) return null;
    const devices = [...m.matchAll(SOCKET_DEVICE)].map((d) => ({
      index: Number(d[1]),
      ...boundOf(d[2], d[3]),
    }));
    return { kind: 'socketDevices', devices };
  },
  // net_ib.cc "NET/IB : Using%s %s; OOB %s:%s" (v2.18.6-1 .. v2.26.6-1
  // src/transport/net_ib.cc, v2.27+ net_ib/init.cc); "NET/IB : No device found."
  (m) => {
    if (/^NET\/IB ?: No device found/.test(m)) return { kind: 'ibDevices', devices: [] };
    if (!/^NET\/IB ?: Using /.test(m)) return null;
    const listed = m.split('; OOB')[0] as string;
    const devices = [...listed.matchAll(IB_DEVICE)].map((d) => ({
      index: Number(d[1]),
      device: d[2] as string,
      port: Number(d[3]),
      link: d[4] as string,
    }));
    return { kind: 'ibDevices', devices };
  },
  // init.cc "Using network %s" (every tag): the NET the communicator runs on.
  (m) => {
    const name = /^Using network (.+)$/.exec(m)?.[1];
    return name === undefined ? null : { kind: 'network', name };
  },
  pluginEvent,
  // net.cc "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s" and
  // [receive] (every tag, src/transport/net.cc; `(%d)` for a proxy device);
  // p2p.cc and shm.cc the same without a side. The NET name is the plugin's
  // and may hold spaces (`NET/AWS Libfabric/0/GDRDMA`).
  (m) => {
    const c = CHANNEL.exec(m);
    if (c === null) return null;
    const via = c[5] as string;
    const net = /^NET\/(.+?)\/(\d+)(?:\(\d+\))?(?:\/|$)/.exec(via);
    return {
      kind: 'channel',
      channel: {
        channel: Number(c[1]),
        from: Number(c[2]),
        to: Number(c[3]),
        direction: (c[4] as Channel['direction'] | undefined) ?? null,
        via,
        net: net === null ? null : { transport: net[1] as string, device: Number(net[2]) },
      },
    };
  },
  // misc/param.cc "%s set by environment to %lld." (numbers end in a full
  // stop), misc/utils.cc and misc/socket.cc "... set by environment to %s".
  (m) => {
    const s = /^(NCCL_\w+) set by environment to (.*)$/.exec(m);
    if (s === null) return null;
    return {
      kind: 'setting',
      name: s[1] as string,
      value: (s[2] as string).replace(/^(-?\d+)\.$/, '$1'),
    };
  },
  // init.cc "comm %p rank %d nranks %d cudaDev ... - Init COMPLETE"
  // (v2.18.6-1), "ncclCommInitRank comm %p rank %d nranks %d ..." (v2.22.3-1),
  // "%s comm %p rank %d nranks %d ..." (v2.29.7-1).
  (m) => {
    const r = /\bcomm \S+ rank (\d+) nranks (\d+) .*Init COMPLETE/.exec(m);
    return r === null ? null : { kind: 'rank', rank: Number(r[1]), nranks: Number(r[2]) };
  },
  // checks.h / misc/socket.cc "Call to connect returned %s, retrying"
  // (v2.18.6-1 .. v2.28.9-1); os/linux.cc "%s: connect to %s returned %s,
  // retrying (%d/%ld) after sleep for %u msec" (v2.29.7-1).
  (m) => (/connect.* returned .*retrying/.test(m) ? { kind: 'retry' } : null),
];

/**
 * The net plugin's fate. Loaded: "NET/Plugin: Loaded net plugin %s (v%d)"
 * (v2.18.6-1 net.cc .. v2.29.7-1 plugin/net/net_v*.cc). Absent (no file of
 * that name): v2.18.6-1 net.cc "NET/Plugin : Plugin load (%s) returned %d :
 * %s" with dlerror's "NAME: cannot open shared object file", 2.19-2.21 "No
 * plugin found (libnccl-net.so)", v2.22.3-1 .. v2.29.7-1 "NET/Plugin: Could
 * not find: %s. ..." (net.cc, plugin/plugin_open.cc). Failed: any other
 * dlerror (an undefined symbol, a library the plugin needs: plugin_open.cc
 * prints it only when the plugin's own file is there), "Failed to find
 * ncclNetPlugin symbol", and from v2.28.9-1 plugin/net.cc "Failed to
 * initialize NET plugin %s" for a plugin other than NCCL's own IB and Socket
 * (IB says so on every host without an HCA).
 */
function pluginEvent(m: string): NcclEvent | null {
  const loaded = /^NET\/Plugin ?: Loaded net plugin (.+?) \(v\d+\)$/.exec(m)?.[1];
  if (loaded !== undefined) return { kind: 'plugin', state: 'loaded', name: loaded };
  const initFailed = /^Failed to initialize NET plugin (.+)$/.exec(m)?.[1];
  if (initFailed !== undefined) {
    return initFailed === 'IB' || initFailed === 'Socket'
      ? null
      : { kind: 'plugin', state: 'failed', name: initFailed };
  }
  if (!/^NET\/Plugin ?:/.test(m)) return null;
  const detail = m.replace(/^NET\/Plugin ?: ?/, '');
  if (/^(Could not find:|No plugin found)/.test(detail))
    return { kind: 'plugin', state: 'absent', name: null };
  const load = /^Plugin load (?:\((\S+)\) )?returned \d+ : (.*)$/.exec(detail);
  if (load !== null) {
    const file = /^(\S+?): cannot open shared object file/.exec(load[2] as string)?.[1];
    const asked = load[1] ?? /when loading (\S+)$/.exec(load[2] as string)?.[1] ?? file;
    return {
      kind: 'plugin',
      state: file !== undefined && file === asked ? 'absent' : 'failed',
      name: null,
    };
  }
  if (/^Failed to find ncclNetPlugin\b/.test(detail))
    return { kind: 'plugin', state: 'failed', name: null };
  // Lines of no verdict: names set by the environment, the fall-back sentence, closing.
  if (
    /^(Plugin name set by env|Using internal|Closing|Failed to find ncclCollNet|Loaded coll|Loaded gin)/.test(
      detail,
    )
  )
    return null;
  // plugin_open.cc "NET/Plugin: %s" / "NET/Plugin: %s: %s": dlerror of a plugin file that is there.
  return /shared object|undefined symbol|cannot|error/i.test(detail)
    ? { kind: 'plugin', state: 'failed', name: null }
    : null;
}

function boundOf(name: string | undefined, address: string | undefined): Bound {
  return { interface: name ?? '', address: withoutZone(address ?? '') };
}

/** The event an INFO message is, or null. */
export function recogniseInfo(message: string): NcclEvent | null {
  for (const recognise of RECOGNISERS) {
    const event = recognise(message);
    if (event !== null) return event;
  }
  return null;
}
