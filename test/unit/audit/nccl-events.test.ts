/**
 * Each recogniser on its format string as the NVIDIA/nccl tag named beside
 * the case prints it (src/audit/nccl-events.ts).
 */
import { describe, expect, it } from 'vitest';
import { recogniseInfo } from '../../../src/audit/nccl-events.js';

describe('recogniseInfo', () => {
  it('the version: init.cc VERSION_STRING (every tag)', () => {
    expect(recogniseInfo('NCCL version 2.29.7+cuda13.0')).toEqual({
      kind: 'version',
      version: '2.29.7',
    });
  });

  it.each([
    [
      'v2.18.6-1 .. v2.23.4-1 bootstrap.cc',
      'Bootstrap : Using eth1:198.18.2.2<0>',
      'eth1',
      '198.18.2.2',
    ],
    [
      'v2.24.3-1 .. v2.29.7-1 bootstrap.cc',
      'Bootstrap: Using eth1:198.18.2.2<0>',
      'eth1',
      '198.18.2.2',
    ],
    ['an alias label, IPv4', 'Bootstrap: Using eth0:1:198.18.2.5<0>', 'eth0:1', '198.18.2.5'],
    [
      'IPv6 link-local with its zone',
      'Bootstrap: Using eno1:fe80::44d8:8fff:fef2:e498%eno1<0>',
      'eno1',
      'fe80::44d8:8fff:fef2:e498',
    ],
    [
      'up to 2.6, indexed (NVIDIA/nccl#352)',
      'Bootstrap : Using [0]lo:127.0.0.1<0>',
      'lo',
      '127.0.0.1',
    ],
  ])('the bootstrap, %s', (_, message, name, address) => {
    expect(recogniseInfo(message)).toEqual({
      kind: 'bootstrap',
      bound: { interface: name, address },
    });
  });

  it('2.24+ "Bootstrap: Using %s:%d" over a NET plugin names no interface (bootstrap.cc v2.24.3-1)', () => {
    expect(recogniseInfo('Bootstrap: Using mlx5_0:1')).toBeNull();
  });

  it('the socket devices (transport/net_socket.cc, every tag); its thread line lists none', () => {
    expect(
      recogniseInfo('NET/Socket : Using [0]eno1:10.0.0.2<0> [1]veth25f2e72:fe80::1%veth25f2e72<0>'),
    ).toEqual({
      kind: 'socketDevices',
      devices: [
        { index: 0, interface: 'eno1', address: '10.0.0.2' },
        { index: 1, interface: 'veth25f2e72', address: 'fe80::1' },
      ],
    });
    expect(recogniseInfo('NET/Socket: Using 1 threads and 1 sockets per thread')).toBeNull();
  });

  it('the IB ports (net_ib.cc v2.18.6-1, net_ib/init.cc v2.29.7-1), merged devices (v2.22.3-1), none', () => {
    expect(
      recogniseInfo('NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.1.0.5<0>'),
    ).toEqual({
      kind: 'ibDevices',
      devices: [
        { index: 0, device: 'mlx5_0', port: 1, link: 'IB' },
        { index: 1, device: 'mlx5_1', port: 1, link: 'RoCE' },
      ],
    });
    const merged = recogniseInfo(
      'NET/IB : Using [0]={[0] mlx5_0:1/RoCE [1] mlx5_1:1/RoCE} [RO]; OOB eth0:10.0.0.1<0>',
    );
    expect(merged).toMatchObject({
      kind: 'ibDevices',
      devices: [{ device: 'mlx5_0' }, { device: 'mlx5_1' }],
    });
    expect(recogniseInfo('NET/IB : No device found.')).toEqual({ kind: 'ibDevices', devices: [] });
  });

  it('the network: init.cc "Using network %s", a plugin\'s name with a space', () => {
    expect(recogniseInfo('Using network AWS Libfabric')).toEqual({
      kind: 'network',
      name: 'AWS Libfabric',
    });
  });

  it.each([
    [
      'loaded, v2.18.6-1 net.cc',
      'NET/Plugin: Loaded net plugin AWS Libfabric (v5)',
      'loaded',
      'AWS Libfabric',
    ],
    [
      'none, v2.18.6-1 net.cc (NVIDIA/nccl-tests#188)',
      'NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory',
      'absent',
      null,
    ],
    [
      'none, 2.21 (pytorch/pytorch#146118)',
      'NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so',
      'absent',
      null,
    ],
    ['none, 2.19-2.21', 'NET/Plugin: No plugin found (libnccl-net.so)', 'absent', null],
    [
      'none, v2.22.3-1 net.cc',
      'NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.',
      'absent',
      null,
    ],
    [
      'none, v2.27.7-1 plugin_open.cc',
      'NET/Plugin: Could not find: libnccl-net.so.',
      'absent',
      null,
    ],
    [
      'failed: its library missing, v2.18.6-1',
      'NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libfabric.so.1: cannot open shared object file: No such file or directory',
      'failed',
      null,
    ],
    [
      'failed: dlerror, v2.22.3-1 net.cc "NET/Plugin: %s"',
      'NET/Plugin: libnccl-net.so: undefined symbol: fi_getinfo',
      'failed',
      null,
    ],
    [
      'failed: dlerror, v2.29.7-1 plugin_open.cc "%s/Plugin: %s: %s"',
      'NET/Plugin: libnccl-net-ofi.so: libfabric.so.1: cannot open shared object file: No such file or directory',
      'failed',
      null,
    ],
    [
      'failed: no symbol, v2.22.3-1',
      'NET/Plugin: Failed to find ncclNetPlugin symbol (>= v5). ncclNetPlugin symbols v4 and lower are not supported.',
      'failed',
      null,
    ],
    [
      'failed to initialise, v2.28.9-1 plugin/net.cc',
      'Failed to initialize NET plugin AWS Libfabric',
      'failed',
      'AWS Libfabric',
    ],
  ])('the plugin: %s', (_, message, state, name) => {
    expect(recogniseInfo(message)).toEqual({ kind: 'plugin', state, name });
  });

  it("NCCL's own IB failing to initialise without an HCA is no plugin failure (plugin/net.cc v2.28.9-1)", () => {
    expect(recogniseInfo('Failed to initialize NET plugin IB')).toBeNull();
    expect(recogniseInfo('NET/Plugin: Plugin name set by env to libnccl-net-ofi.so')).toBeNull();
    expect(recogniseInfo('NET/Plugin: Using internal network plugin.')).toBeNull();
  });

  it("a channel over a plugin's network with a proxy device (aws/aws-ofi-nccl#715), and over P2P", () => {
    expect(
      recogniseInfo('Channel 04/1 : 3[3] -> 10[2] [send] via NET/AWS Libfabric/1(2)/GDRDMA/Shared'),
    ).toEqual({
      kind: 'channel',
      channel: {
        channel: 4,
        from: 3,
        to: 10,
        direction: 'send',
        via: 'NET/AWS Libfabric/1(2)/GDRDMA/Shared',
        net: { transport: 'AWS Libfabric', device: 1 },
      },
    });
    // A bus id in brackets (NVIDIA/nccl#527), the ring's order line (graph/rings.cc) is none.
    expect(recogniseInfo('Channel 01 : 24[101c0] -> 31[a01d0] via P2P/IPC/read')).toMatchObject({
      channel: { from: 24, to: 31, direction: null, net: null },
    });
    expect(recogniseInfo('Channel 00/02 : 0 1')).toBeNull();
  });

  it('the settings NCCL echoed: numbers end in a full stop (misc/param.cc), strings not (misc/utils.cc)', () => {
    expect(recogniseInfo('NCCL_SOCKET_NTHREADS set by environment to 4.')).toEqual({
      kind: 'setting',
      name: 'NCCL_SOCKET_NTHREADS',
      value: '4',
    });
    expect(recogniseInfo('NCCL_SOCKET_IFNAME set by environment to =ens3f0')).toMatchObject({
      value: '=ens3f0',
    });
  });

  it('the rank: init.cc "Init COMPLETE" at v2.18.6-1, v2.22.3-1 and v2.29.7-1', () => {
    for (const message of [
      'comm 0x55d0 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 1b000 commId 0x7a3f - Init COMPLETE',
      'ncclCommInitRank comm 0x55d0 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 1b000 commId 0x7a3f - Init COMPLETE',
      'ncclCommInitRankConfig comm 0x55d0 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 1b000 commId 0x7a3f - Init COMPLETE',
    ]) {
      expect(recogniseInfo(message)).toEqual({ kind: 'rank', rank: 3, nranks: 16 });
    }
  });

  it('connect retries: checks.h/socket.cc up to v2.28.9-1, os/linux.cc v2.29.7-1', () => {
    expect(recogniseInfo('Call to connect returned Connection refused, retrying')).toEqual({
      kind: 'retry',
    });
    expect(
      recogniseInfo(
        'bootstrapConnect: connect to 10.0.1.10<45611> returned Connection refused, retrying (1/34) after sleep for 100 msec',
      ),
    ).toEqual({ kind: 'retry' });
  });
});
