/**
 * What NCCL's own log (NCCL_DEBUG=INFO) says about the interfaces and the
 * transports it used, for the GPU check (issue 31). The lines, as NCCL's
 * source prints them (NVIDIA/nccl at v2.22.3-1, v2.28.9-1, v2.29.7-1):
 *
 *   host:pid:tid [dev] NCCL INFO NCCL version 2.28.9+cuda13.0          init.cc VERSION_STRING
 *   host:pid:tid [dev] NCCL INFO Bootstrap : Using eth1:198.18.2.2<0>   bootstrap.cc, up to 2.23
 *   host:pid:tid [dev] NCCL INFO Bootstrap: Using eth1:198.18.2.2<0>    bootstrap.cc, 2.24+
 *   host:pid:tid [dev] NCCL INFO NET/Socket : Using [0]eth1:198.18.2.2<0> [1]...   net_socket.cc
 *   host:pid:tid [dev] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0   net.cc
 *   host:pid:tid [dev] NCCL INFO NCCL_HOSTID set by environment to node0                misc/utils.cc
 *   [time] host:pid:tid [dev] file.cc:123 NCCL WARN message                             debug.cc
 *
 * An address is ncclSocketToString's `host<port>` (numeric host; an IPv6
 * link-local one carries its `%zone`). "NET/Socket: Using 1 threads and 1
 * sockets per thread" is another line, of no devices. A line may carry a
 * launcher's prefix before NCCL's own (torchrun's `[rank0]:`, Ray's).
 */

export interface Bound {
  interface: string;
  /** The numeric address, without an IPv6 zone. */
  address: string;
}

/** One device of NCCL's socket transport, as `NET/Socket : Using` lists it. */
export interface SocketDevice extends Bound {
  index: number;
}

export interface Channel {
  channel: number;
  from: number;
  to: number;
  /** NET channels say which side this rank is; P2P and SHM ones say nothing. */
  direction: 'send' | 'receive' | null;
  /** What follows `via`: `NET/Socket/0`, `NET/IB/0/GDRDMA`, `P2P/IPC`, `SHM/direct/direct`. */
  via: string;
  /** For a NET channel: the transport (`Socket`, `IB`) and its device index. */
  net: { transport: string; device: number } | null;
}

export interface NcclLog {
  /** X.Y.Z from "NCCL version X.Y.Z+cudaA.B"; null when the log has none (rank 0 prints it). */
  version: string | null;
  bootstrap: Bound | null;
  /** The socket transport's devices; null when NCCL never listed them. */
  socketDevices: SocketDevice[] | null;
  channels: Channel[];
  /** `NCCL_X set by environment to V` lines, as NCCL read them. */
  settings: Record<string, string>;
  /** The text of each NCCL WARN line. */
  warnings: string[];
}

// getnameinfo's numeric host: IPv4, or IPv6 (two colons at least) with an
// optional %zone. An interface name may hold a colon (an IPv4 alias label,
// `eth0:1`), so the name ends where an address that runs up to `<port>` begins.
const ADDRESS = String.raw`(\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]*:[0-9A-Fa-f]*:[0-9A-Fa-f:.]*)(?:%[^<\s]+)?<(\d+)>`;
const BOUND = new RegExp(String.raw`^(\S+?):${ADDRESS}$`);
const SOCKET_DEVICE = new RegExp(String.raw`\[(\d+)\](\S+?):${ADDRESS}`, 'g');
const CHANNEL =
  /^Channel (\d+)(?:\/\d+)? : (\d+)\[[0-9a-fx]+\] -> (\d+)\[[0-9a-fx]+\](?: \[(send|receive)\])? via (\S+)/;

export function parseNcclLog(text: string): NcclLog {
  const log: NcclLog = {
    version: null,
    bootstrap: null,
    socketDevices: null,
    channels: [],
    settings: {},
    warnings: [],
  };
  for (const line of text.split('\n')) {
    const info = /NCCL INFO (.*?)\s*$/.exec(line)?.[1];
    if (info !== undefined) readInfo(info, log);
    const warn = /NCCL WARN (.*?)\s*$/.exec(line)?.[1];
    if (warn !== undefined) log.warnings.push(warn);
  }
  return log;
}

function readInfo(message: string, log: NcclLog): void {
  const version = /^NCCL version (\d+\.\d+\.\d+)/.exec(message)?.[1];
  if (version !== undefined) {
    log.version ??= version;
    return;
  }
  const bootstrap = /^Bootstrap ?: Using (\S+)$/.exec(message)?.[1];
  if (bootstrap !== undefined) {
    // 2.24+ also prints "Bootstrap: Using mlx5_0:1" for a bootstrap over a NET plugin: no address.
    const bound = BOUND.exec(bootstrap);
    if (bound !== null) log.bootstrap ??= { interface: at(bound, 1), address: at(bound, 2) };
    return;
  }
  if (/^NET\/Socket ?: Using \[/.test(message)) {
    log.socketDevices ??= [...message.matchAll(SOCKET_DEVICE)].map((device) => ({
      index: Number(at(device, 1)),
      interface: at(device, 2),
      address: at(device, 3),
    }));
    return;
  }
  const channel = CHANNEL.exec(message);
  if (channel !== null) {
    const via = at(channel, 5);
    const net = /^NET\/([^/(\s]+)\/(\d+)/.exec(via);
    log.channels.push({
      channel: Number(at(channel, 1)),
      from: Number(at(channel, 2)),
      to: Number(at(channel, 3)),
      direction: (channel[4] as Channel['direction'] | undefined) ?? null,
      via,
      net: net === null ? null : { transport: at(net, 1), device: Number(at(net, 2)) },
    });
    return;
  }
  const setting = /^(NCCL_\w+) set by environment to (.*)$/.exec(message);
  if (setting !== null) {
    // Numbers end in a full stop there (misc/param.cc), strings do not (misc/utils.cc).
    log.settings[at(setting, 1)] = at(setting, 2).replace(/^(-?\d+)\.$/, '$1');
  }
}

function at(match: RegExpExecArray | RegExpMatchArray, group: number): string {
  return match[group] ?? '';
}
