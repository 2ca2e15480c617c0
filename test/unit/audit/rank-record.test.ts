/**
 * audit's reading of one process's NCCL log (src/audit/rank-record.ts; the
 * GPU check reads its workers' logs with it too), on
 * lines as NCCL prints them: the format strings of NVIDIA/nccl at the tags
 * named with each case (src/debug.cc adds `host:pid:tid [cudaDev] NCCL INFO `,
 * and for a WARN a `[%F %T] ` timestamp and `file:line`), the lines
 * shared/LAB.md recorded from the lab's real NCCL 2.22 and 2.29, and the
 * real NCCL 2.29.7's own log (Debian sid's lab root, ncclGetUniqueId in the
 * GPU check's trap lab, test/device/trap-lab.sh), copied as it came.
 */
import { describe, expect, it } from 'vitest';
import { readNcclLog, readOneProcess } from '../../../src/audit/rank-record.js';

/** One rank of the GPU check's data path, as NCCL 2.28.9 (torch 2.11's wheel) logs it. */
const NCCL_2_28_NODE0 = `
gpu-host:4711:4711 [0] NCCL INFO NCCL_HOSTID set by environment to gpu-check-node0
gpu-host:4711:4711 [0] NCCL INFO Bootstrap: Using ens3f0:198.18.0.1<0>
gpu-host:4711:4711 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
gpu-host:4711:4790 [0] NCCL INFO NET/IB : No device found.
gpu-host:4711:4790 [0] NCCL INFO NET/Socket : Using [0]ens3f0:198.18.0.1<0>
gpu-host:4711:4790 [0] NCCL INFO Initialized NET plugin Socket
gpu-host:4711:4790 [0] NCCL INFO Using network Socket
gpu-host:4711:4790 [0] NCCL INFO Channel 00/02 : 0 1
gpu-host:4711:4790 [0] NCCL INFO Channel 01/02 : 0 1
gpu-host:4711:4790 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0
gpu-host:4711:4790 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[0] [receive] via NET/Socket/0
gpu-host:4711:4790 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0
gpu-host:4711:4790 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/Socket/0
gpu-host:4711:4790 [0] NCCL INFO NET/Socket: Using 1 threads and 1 sockets per thread
gpu-host:4711:4790 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0
`;

describe('readOneProcess', () => {
  it('NCCL 2.28: version, bootstrap, socket devices, channels, NCCL_HOSTID', () => {
    const log = readOneProcess(NCCL_2_28_NODE0);
    expect(log.nccl.version).toBe('2.28.9');
    expect(log.nccl.bootstrap).toEqual({ interface: 'ens3f0', address: '198.18.0.1' });
    // "NET/Socket: Using 1 threads ..." lists no device and changes nothing.
    expect(log.nccl.devices.socket).toEqual([
      { index: 0, interface: 'ens3f0', address: '198.18.0.1' },
    ]);
    // "Channel 00/02 : 0 1" is the ring's order (graph/rings.cc), no connection.
    expect(log.nccl.channels).toHaveLength(4);
    expect(log.nccl.channels[0]).toEqual({
      channel: 0,
      from: 1,
      to: 0,
      direction: 'receive',
      via: 'NET/Socket/0',
      net: { transport: 'Socket', device: 0 },
    });
    expect(
      log.nccl.channels.every((c) => c.net?.transport === 'Socket' && c.net.device === 0),
    ).toBe(true);
    expect(log.settings).toEqual({ NCCL_HOSTID: 'gpu-check-node0' });
    expect(log.warnings).toEqual([]);
  });

  it("the bootstrap line's two spellings: 2.22's `Bootstrap : Using`, 2.24+'s `Bootstrap: Using` (LAB.md)", () => {
    expect(
      readOneProcess('node1:88:88 [0] NCCL INFO Bootstrap : Using eth1:198.18.2.2<0>').nccl
        .bootstrap,
    ).toEqual({
      interface: 'eth1',
      address: '198.18.2.2',
    });
    expect(
      readOneProcess('node1:88:88 [0] NCCL INFO Bootstrap: Using eth1:198.18.2.2<0>').nccl
        .bootstrap,
    ).toEqual({
      interface: 'eth1',
      address: '198.18.2.2',
    });
    // 2.24+ over a NET plugin (NCCL_OOB_NET_ENABLE): "Bootstrap: Using %s:%d", a device and port, no address.
    expect(
      readOneProcess('node1:88:88 [0] NCCL INFO Bootstrap: Using mlx5_0:1').nccl.bootstrap,
    ).toBeNull();
  });

  it('several socket devices, IPv6 with a zone, an alias label, a launcher prefix', () => {
    const log = readOneProcess(
      '[rank0]: node1:88:90 [0] NCCL INFO NET/Socket : Using [0]eth0:1:198.18.2.5<0> [1]ens1:fe80::5%ens1<0> [2]ib0:2001:db8::5<0>',
    );
    expect(log.nccl.devices.socket).toEqual([
      { index: 0, interface: 'eth0:1', address: '198.18.2.5' },
      { index: 1, interface: 'ens1', address: 'fe80::5' },
      { index: 2, interface: 'ib0', address: '2001:db8::5' },
    ]);
  });

  it('the first listing counts: NCCL prints its devices once per process', () => {
    const log = readOneProcess(
      [
        'h:1:2 [0] NCCL INFO NET/Socket : Using [0]ens3f0:198.18.0.1<0>',
        'h:1:2 [0] NCCL INFO NET/Socket : Using [0]eno1:198.18.100.1<0>',
      ].join('\n'),
    );
    expect(log.nccl.devices.socket?.map((d) => d.interface)).toEqual(['ens3f0']);
  });

  it("channels over other transports, a proxy rank, GDR and shared (net.cc's and p2p.cc's formats)", () => {
    const log = readOneProcess(
      [
        'h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC',
        'h:1:2 [0] NCCL INFO Channel 00 : 1[1] -> 2[2] via SHM/direct/direct',
        'h:1:2 [0] NCCL INFO Channel 01/0 : 3[3] -> 4[0] [send] via NET/IB/1(2)/GDRDMA',
        'h:1:2 [0] NCCL INFO Channel 01/1 : 0[0] -> 1[1] [send] via NET/Socket/0/Shared',
      ].join('\n'),
    );
    expect(log.nccl.channels.map((c) => [c.direction, c.via, c.net])).toEqual([
      [null, 'P2P/IPC', null],
      [null, 'SHM/direct/direct', null],
      ['send', 'NET/IB/1(2)/GDRDMA', { transport: 'IB', device: 1 }],
      ['send', 'NET/Socket/0/Shared', { transport: 'Socket', device: 0 }],
    ]);
  });

  it("WARN lines, as debug.cc prints them (a newline, a timestamp, file:line), each its process's", () => {
    const text = [
      '',
      '[2026-11-20 10:00:00] gpu-host:4712:4712 [0] misc/socket.cc:596 NCCL WARN socketStartConnect: connect to 198.18.100.1<36473> failed : Network is unreachable',
      'gpu-host:4712:4712 [0] NCCL INFO bootstrap.cc:80 -> 2',
      'node1:88:88 [0] bootstrap.cc:102 NCCL WARN Bootstrap : no socket interface found',
    ].join('\n');
    const { ranks } = readNcclLog([{ source: 'trap.log', text }]);
    expect(ranks.map((r) => [r.host, r.pid, r.warnings])).toEqual([
      [
        'gpu-host',
        4712,
        ['socketStartConnect: connect to 198.18.100.1<36473> failed : Network is unreachable'],
      ],
      ['node1', 88, ['Bootstrap : no socket interface found']],
    ]);
    expect(ranks[0]?.nccl.bootstrap).toBeNull();
    expect(ranks[0]?.nccl.devices.socket).toBeNull();
    expect(ranks[0]?.evidence.warn).toEqual({
      source: 'trap.log',
      line: 2,
      text: text.split('\n')[1],
    });
  });

  it("the real NCCL 2.29.7 in the trap lab: alone, under nccl-run's variables, IPv6, nothing found", () => {
    const alone =
      readOneProcess(`vm:22611:22611 [0] NCCL INFO ENV/Plugin: Could not find: libnccl-env.so
vm:22611:22611 [0] NCCL INFO Bootstrap: Using eno1:198.18.100.1<0>
vm:22611:22611 [0] NCCL INFO ENV/Plugin: Closing env plugin ncclEnvDefault`);
    expect(alone.nccl.bootstrap).toEqual({ interface: 'eno1', address: '198.18.100.1' });

    const exported =
      readOneProcess(`vm:22634:22634 [0] NCCL INFO ENV/Plugin: Could not find: libnccl-env.so
vm:22634:22634 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to =ens3f0
vm:22634:22634 [0] NCCL INFO Bootstrap: Using ens3f0:198.18.0.1<0>`);
    expect(exported.nccl.bootstrap).toEqual({ interface: 'ens3f0', address: '198.18.0.1' });
    // 2.29 logs it (misc/socket.cc); 2.28.9 does not, so the check reads the worker's environment.
    expect(exported.settings).toEqual({ NCCL_SOCKET_IFNAME: '=ens3f0' });

    const linkLocal =
      readOneProcess(`vm:26241:26241 [0] NCCL INFO NCCL_SOCKET_FAMILY set by environment to AF_INET6
vm:26241:26241 [0] NCCL INFO Bootstrap: Using eno1:fe80::44d8:8fff:fef2:e498%eno1<0>`);
    expect(linkLocal.nccl.bootstrap).toEqual({
      interface: 'eno1',
      address: 'fe80::44d8:8fff:fef2:e498',
    });
    expect(
      readOneProcess('vm:26249:26249 [0] NCCL INFO Bootstrap: Using ens3f0:2001:db8::5<0>').nccl
        .bootstrap,
    ).toEqual({ interface: 'ens3f0', address: '2001:db8::5' });

    const none =
      readOneProcess(`vm:26257:26257 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to =nothere

[2026-12-04 04:33:36] vm:26257:26257 [0] bootstrap.cc:130 NCCL WARN Bootstrap : no socket interface found
vm:26257:26257 [0] NCCL INFO init.cc:141 -> 5`);
    expect(none.nccl.bootstrap).toBeNull();
    expect(none.warnings).toEqual(['Bootstrap : no socket interface found']);
  });

  it('numeric settings end in a full stop in NCCL (misc/param.cc); the value does not', () => {
    expect(
      readOneProcess('h:1:1 [0] NCCL INFO NCCL_SOCKET_NTHREADS set by environment to 4.').settings,
    ).toEqual({
      NCCL_SOCKET_NTHREADS: '4',
    });
  });
});
