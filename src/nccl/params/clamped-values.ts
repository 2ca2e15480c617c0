/**
 * Values NCCL reads but does not use as given: the socket transport's
 * thread and socket counts (NVIDIA/nccl src/transport/net_socket.cc
 * ncclNetSocketGetNsockNthread, the same at every tag from v2.18.1-1 to
 * v2.30.7-1): NCCL_SOCKET_NTHREADS above MAX_THREADS (16) is set to 16;
 * threads × NCCL_NSOCKS_PERTHREAD above MAX_SOCKETS (64) sets the sockets
 * per thread to 64 / threads; and with NCCL_SOCKET_NTHREADS unset, NCCL
 * starts no helper thread (so no socket at all) unless the interface's PCI
 * vendor is AWS's (0x1d0f: 2 threads) or Google's (0x1ae0: 4 threads).
 * Both are NCCL_PARAMs, read as ncclIntParam reads them, -2 meaning auto.
 */
import { ncclIntParam } from '../nccl-param.js';

const MAX_THREADS = 16;
const MAX_SOCKETS = 64;
const AUTO = -2;

/** A setting as the lint names it: its value and where it was set. */
export interface SettingSeen {
  value: string;
  where: string;
}

export function clampedValues(settings: Readonly<Record<string, SettingSeen>>): string[] {
  const threadsSet = settings.NCCL_SOCKET_NTHREADS;
  const socksSet = settings.NCCL_NSOCKS_PERTHREAD;
  const notes: string[] = [];
  const given = ncclIntParam(threadsSet?.value, AUTO);
  const threads = Math.min(given, MAX_THREADS);
  if (threadsSet !== undefined && given > MAX_THREADS) {
    notes.push(
      `${said('NCCL_SOCKET_NTHREADS', threadsSet)}: NCCL uses at most ${MAX_THREADS} socket threads and sets it to ${MAX_THREADS}`,
    );
  }
  if (socksSet === undefined) return notes;
  const socks = ncclIntParam(socksSet.value, AUTO);
  if (socks === AUTO) return notes;
  if (threads === AUTO) {
    notes.push(
      `${said('NCCL_NSOCKS_PERTHREAD', socksSet)} without NCCL_SOCKET_NTHREADS: NCCL starts no socket threads, and so ignores it, unless the interface is an AWS (2 threads) or Google Cloud (4 threads) NIC; set NCCL_SOCKET_NTHREADS too`,
    );
  } else if (threads === 0) {
    notes.push(
      `${said('NCCL_NSOCKS_PERTHREAD', socksSet)} with NCCL_SOCKET_NTHREADS=0: NCCL starts no socket threads, and so ignores it`,
    );
  } else if (threads > 0 && socks * threads > MAX_SOCKETS) {
    notes.push(
      `${said('NCCL_NSOCKS_PERTHREAD', socksSet)} with ${threads} socket threads: NCCL uses at most ${MAX_SOCKETS} sockets, and sets NCCL_NSOCKS_PERTHREAD to ${Math.floor(MAX_SOCKETS / threads)}`,
    );
  }
  return notes;
}

function said(name: string, setting: SettingSeen): string {
  return `${name}=${setting.value} (set in ${setting.where})`;
}
