/**
 * The socket counts NCCL clamps or ignores (src/nccl/params/clamped-values.ts;
 * NVIDIA/nccl src/transport/net_socket.cc ncclNetSocketGetNsockNthread,
 * MAX_THREADS 16 and MAX_SOCKETS 64 at every tag from v2.18.1-1 to v2.30.7-1).
 */
import { describe, expect, it } from 'vitest';
import { clampedValues } from '../../../../src/nccl/params/clamped-values.js';

const set = (values: Record<string, string>, where = 'the environment') =>
  clampedValues(
    Object.fromEntries(Object.entries(values).map(([name, value]) => [name, { value, where }])),
  );

describe('clampedValues', () => {
  it('NCCL_SOCKET_NTHREADS above 16 is set to 16', () => {
    expect(set({ NCCL_SOCKET_NTHREADS: '32' })).toEqual([
      'NCCL_SOCKET_NTHREADS=32 (set in the environment): NCCL uses at most 16 socket threads and sets it to 16',
    ]);
  });

  it('threads × sockets per thread above 64 lowers the sockets per thread to 64 / threads', () => {
    expect(set({ NCCL_SOCKET_NTHREADS: '8', NCCL_NSOCKS_PERTHREAD: '16' })).toEqual([
      'NCCL_NSOCKS_PERTHREAD=16 (set in the environment) with 8 socket threads: NCCL uses at most 64 sockets, and sets NCCL_NSOCKS_PERTHREAD to 8',
    ]);
  });

  it('counts the threads after their own clamp', () => {
    expect(set({ NCCL_SOCKET_NTHREADS: '20', NCCL_NSOCKS_PERTHREAD: '8' })).toEqual([
      'NCCL_SOCKET_NTHREADS=20 (set in the environment): NCCL uses at most 16 socket threads and sets it to 16',
      'NCCL_NSOCKS_PERTHREAD=8 (set in the environment) with 16 socket threads: NCCL uses at most 64 sockets, and sets NCCL_NSOCKS_PERTHREAD to 4',
    ]);
  });

  it('sockets per thread without threads are ignored but on AWS and Google Cloud NICs', () => {
    expect(set({ NCCL_NSOCKS_PERTHREAD: '4' }, '/etc/nccl.conf')).toEqual([
      'NCCL_NSOCKS_PERTHREAD=4 (set in /etc/nccl.conf) without NCCL_SOCKET_NTHREADS: NCCL starts no socket threads, and so ignores it, unless the interface is an AWS (2 threads) or Google Cloud (4 threads) NIC; set NCCL_SOCKET_NTHREADS too',
    ]);
    expect(set({ NCCL_SOCKET_NTHREADS: '0', NCCL_NSOCKS_PERTHREAD: '4' })).toEqual([
      'NCCL_NSOCKS_PERTHREAD=4 (set in the environment) with NCCL_SOCKET_NTHREADS=0: NCCL starts no socket threads, and so ignores it',
    ]);
  });

  it.each([
    [{}],
    [{ NCCL_SOCKET_NTHREADS: '16' }],
    [{ NCCL_SOCKET_NTHREADS: '4', NCCL_NSOCKS_PERTHREAD: '16' }],
    [{ NCCL_SOCKET_NTHREADS: '0x10', NCCL_NSOCKS_PERTHREAD: '4' }],
    [{ NCCL_SOCKET_NTHREADS: '4', NCCL_NSOCKS_PERTHREAD: '-2' }],
    [{ NCCL_SOCKET_NTHREADS: '', NCCL_NSOCKS_PERTHREAD: '' }],
  ])('%j is used as given', (values) => {
    expect(set(values)).toEqual([]);
  });
});
