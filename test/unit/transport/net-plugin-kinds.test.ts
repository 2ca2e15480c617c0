/**
 * What a found plugin library is (src/transport/net-plugin-kinds.ts), over
 * folders laid out as each plugin's installer lays them out (cited there).
 * No real plugin binary runs here: the files are empty stand-ins.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NET_PLUGIN_KINDS, recognisePlugin } from '../../../src/transport/net-plugin-kinds.js';

const root = mkdtempSync(join(tmpdir(), 'n37-kinds-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const file = (path: string, text = '') => {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
};

file('/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so');
file('/opt/amazon/ofi-nccl/lib/libnccl-net.so');
file('/opt/plugins/libnccl-net-ofi.so');
symlinkSync('libnccl-net-ofi.so', join(root, '/opt/plugins/libnccl-net.so'));
file('/usr/local/tcpx/lib64/libnccl-net.so');
file('/var/lib/tcpxo/lib64/libnccl-net.so');
file('/usr/local/nvidia/lib64/libnccl-net.so');
file('/usr/local/nvidia/lib64/libnccl-net_internal.so');
file('/opt/other/libnccl-net.so');
file(
  '/var/lib/dpkg/status',
  'Package: libc6\nStatus: install ok installed\nVersion: 2.41-1\n\nPackage: libnccl-ofi\nStatus: install ok installed\nVersion: 1.14.2-1\n',
);

describe('recognisePlugin', () => {
  it.each([
    ['/opt/amazon/ofi-nccl/lib/libnccl-net.so', 'aws-ofi-nccl', '1.14.2', 'Libfabric'],
    ['/opt/plugins/libnccl-net.so', 'aws-ofi-nccl', '1.14.2', 'Libfabric'],
    ['/usr/local/tcpx/lib64/libnccl-net.so', 'gpudirect-tcpx', null, 'GPUDirectTCPX_v7'],
    ['/var/lib/tcpxo/lib64/libnccl-net.so', 'tcpxo', null, 'FasTrak'],
    ['/usr/local/nvidia/lib64/libnccl-net.so', 'tcpxo', null, 'FasTrak'],
    ['/opt/other/libnccl-net.so', 'other', null, null],
  ])('%s: %s', (path, id, version, ncclNet) => {
    const found = recognisePlugin(path, root);
    expect(found.kind.id).toBe(id);
    expect(found.version).toBe(version);
    expect(found.kind.ncclNet(found.version)).toBe(ncclNet);
  });

  it('aws-ofi-nccl answers to "AWS Libfabric" before 1.13.0 and when its version is unknown', () => {
    const ofi = NET_PLUGIN_KINDS.find((kind) => kind.id === 'aws-ofi-nccl');
    expect(ofi?.ncclNet('1.12.1')).toBe('AWS Libfabric');
    expect(ofi?.ncclNet(null)).toBe('AWS Libfabric');
    expect(ofi?.ncclNet('1.13.0')).toBe('Libfabric');
  });
});
