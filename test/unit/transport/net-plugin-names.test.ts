/**
 * The names NCCL dlopen()s for NCCL_NET_PLUGIN, per release
 * (src/transport/net-plugin-names.ts, nccl/releases.ts netPluginNames);
 * each row as read at NVIDIA/nccl's tag. Where the loader finds them is the
 * loader tier's (test/e2e/net-plugin-loader.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { ncclBehaviour } from '../../../src/nccl/behaviour.js';
import { netPluginEntries } from '../../../src/transport/net-plugin-names.js';

const names = (value: string | undefined, version: string) =>
  netPluginEntries(value, ncclBehaviour(version).netPluginNames).map((entry) => entry.names);

describe('netPluginEntries', () => {
  it.each<[string, string | undefined, string, string[][]]>([
    ['unset: libnccl-net.so', undefined, '2.22.3', [['libnccl-net.so']]],
    ['unset, 2.29', undefined, '2.29.7', [['libnccl-net.so']]],
    ['empty, before 2.27: the default', '', '2.26.2', [['libnccl-net.so']]],
    ['empty, from 2.27: no external plugin', '', '2.27.5', []],
    [
      '<x> before 2.27: as named, then libnccl-net-<x>.so',
      'ofi',
      '2.22.3',
      [['ofi', 'libnccl-net-ofi.so']],
    ],
    [
      'a comma is part of the one name before 2.27',
      'a,b',
      '2.26.6',
      [['a,b', 'libnccl-net-a,b.so']],
    ],
    [
      '2.27.3: lib*.so as named, others only prefixed',
      'libx.so,ofi',
      '2.27.3',
      [['libx.so'], ['libnccl-net-ofi.so']],
    ],
    [
      '2.27.3: a path is prefixed too',
      '/opt/p/libnccl-net.so',
      '2.27.3',
      [['libnccl-net-/opt/p/libnccl-net.so.so']],
    ],
    [
      '2.27.5+: as named, then prefixed',
      'ofi,tcpx',
      '2.29.7',
      [
        ['ofi', 'libnccl-net-ofi.so'],
        ['tcpx', 'libnccl-net-tcpx.so'],
      ],
    ],
    [
      '2.27.5+: a path or a lib*.so only as named',
      '/opt/p/libnccl-net.so,libnccl-net-ofi.so',
      '2.30.7',
      [['/opt/p/libnccl-net.so'], ['libnccl-net-ofi.so']],
    ],
    ['empty fields vanish (strtok_r)', ',ofi,,', '2.29.7', [['ofi', 'libnccl-net-ofi.so']]],
    ['none before 2.28.3 is a name', 'none', '2.27.7', [['none', 'libnccl-net-none.so']]],
    ['NONE from 2.28.3 loads nothing', 'NONE', '2.28.3', []],
    ['a prefix of STATIC_PLUGIN opens the program itself (2.22)', 'static', '2.22.3', [[]]],
    [
      '… and in a list, only for that entry (2.29)',
      's,ofi',
      '2.29.7',
      [[], ['ofi', 'libnccl-net-ofi.so']],
    ],
  ])('%s', (_, value, version, expected) => {
    expect(names(value, version)).toEqual(expected);
  });

  it('cuts a list at 14 plugins (NCCL_NET_MAX_PLUGINS 16 less IB and Socket)', () => {
    const list = Array.from({ length: 20 }, (_, i) => `p${i}`).join(',');
    expect(names(list, '2.29.7')).toHaveLength(14);
  });
});
