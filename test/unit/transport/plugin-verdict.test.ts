/**
 * The data plane with a net plugin in front of NCCL's own transports
 * (src/transport/plugin-verdict.ts, plugin-nics.ts, transport-requirement.ts),
 * over RDMA snapshots (test/fixtures/rdma) and interfaces written here.
 * The plugins are search results, not binaries: none runs here.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/exit-status.js';
import type { InterfaceFacts } from '../../../src/host/host-facts.js';
import { assessTransport } from '../../../src/transport/assess-transport.js';
import type { NetPluginSearch } from '../../../src/transport/find-net-plugin.js';
import { pluginNics } from '../../../src/transport/plugin-nics.js';
import {
  type RequiredTransport,
  requiredNcclNet,
} from '../../../src/transport/transport-requirement.js';
import { NO_PLUGIN, pluginFound } from '../../fixtures/rdma/net-plugin-search.js';
import { loadRdmaFacts, type RdmaFixture } from '../../fixtures/rdma/rdma-fixtures.js';

function assess(
  fixture: RdmaFixture | null,
  netPlugin: NetPluginSearch,
  options: {
    env?: Record<string, string>;
    required?: RequiredTransport;
    interfaces?: InterfaceFacts[];
  } = {},
) {
  return assessTransport({
    rdma: fixture === null ? undefined : loadRdmaFacts(fixture).rdma,
    ncclEnv: options.env ?? {},
    required: options.required ?? null,
    requiredBy: { name: '--require-transport', from: 'flag' },
    originOf: (name) => ({ name, from: 'env' }),
    netPlugin,
    facts: { interfaces: options.interfaces ?? [] },
  });
}

const gvnic = (name: string, up = true): InterfaceFacts => ({
  name,
  operstate: up ? 'up' : 'down',
  carrier: up,
  addresses: [],
  speedMbps: 200000,
  mtu: 8244,
  kind: 'physical',
  master: null,
  rdma: null,
  vendor: '0x1ae0',
});
const A3_HIGH = ['eth0', 'eth1', 'eth2', 'eth3', 'eth4'].map((name) => gvnic(name));

describe('EFA', () => {
  it('aws-ofi-nccl with the EFA devices: transport efa, bootstrap only on the socket interface', () => {
    const { verdict, unmet, warnings } = assess('efa-node', pluginFound('aws-ofi-nccl', '1.14.2'), {
      required: 'efa',
    });
    expect(verdict.kind).toBe('efa');
    expect(verdict.reason).toBe(
      "aws-ofi-nccl 1.14.2 (/opt/amazon/ofi-nccl/lib/libnccl-net.so, via ld.so.cache) drives 4 EFA device(s) (rdmap16s27, rdmap32s27, rdmap48s27, rdmap64s27); the socket interface carries NCCL's bootstrap only",
    );
    expect(unmet).toBeNull();
    expect(warnings).toEqual([]);
  });

  it('the plugin without the EFA device files (a container without /dev/infiniband): sockets, 69 under efa', () => {
    const rdma = { ...loadRdmaFacts('efa-node').rdma, deviceFiles: [] } as NonNullable<
      ReturnType<typeof loadRdmaFacts>['rdma']
    >;
    const transport = assessTransport({
      rdma,
      ncclEnv: {},
      required: 'efa',
      requiredBy: { name: '--require-transport', from: 'flag' },
      originOf: (name) => ({ name, from: 'env' }),
      netPlugin: pluginFound('aws-ofi-nccl'),
      facts: { interfaces: [] },
    });
    expect(transport.verdict.kind).toBe('socket');
    expect(transport.verdict.reason).toContain(
      'the EFA devices have no /dev/infiniband device file here',
    );
    expect(transport.unmet?.exitCode).toBe(EXIT.noInterface);
  });

  it('no plugin: 78 under efa and rdma, a warning otherwise', () => {
    for (const required of ['efa', 'rdma'] as const) {
      const { unmet } = assess('efa-node', NO_PLUGIN, { required });
      expect(unmet?.exitCode).toBe(EXIT.config);
      expect(unmet?.message).toContain(
        'but NCCL will not load aws-ofi-nccl: no libnccl-net.so where the loader looks; put the plugin',
      );
    }
    expect(assess('efa-node', NO_PLUGIN).warnings[0]).toMatch(
      /but no net plugin .*--require-transport efa refuses/,
    );
  });

  it('a user NCCL_NET that leaves the plugin out conflicts with efa (78)', () => {
    const { verdict, unmet } = assess('efa-node', pluginFound('aws-ofi-nccl'), {
      env: { NCCL_NET: 'Socket' },
      required: 'efa',
    });
    expect(verdict.kind).toBe('socket');
    expect(unmet?.message).toBe(
      '--require-transport efa conflicts with NCCL_NET=Socket leaves aws-ofi-nccl out; unset it or drop --require-transport',
    );
  });

  it('aws-ofi-nccl before 1.13 answers only to "AWS Libfabric"', () => {
    const old = pluginFound('aws-ofi-nccl', '1.12.1');
    expect(assess('efa-node', old, { env: { NCCL_NET: 'Libfabric' } }).verdict.kind).toBe('socket');
    expect(assess('efa-node', old, { env: { NCCL_NET: 'AWS Libfabric' } }).verdict.kind).toBe(
      'efa',
    );
    expect(
      assess('efa-node', pluginFound('aws-ofi-nccl', '1.13.0'), { env: { NCCL_NET: 'ofi' } })
        .verdict.kind,
    ).toBe('efa');
  });

  it('efa with no EFA device is 69; ib is still met by IB alone', () => {
    expect(assess('ib-dgx', NO_PLUGIN, { required: 'efa' }).unmet?.exitCode).toBe(EXIT.noInterface);
    expect(assess('ib-dgx', NO_PLUGIN, { required: 'rdma' }).unmet).toBeNull();
  });

  it.each<[RequiredTransport | null, NetPluginSearch, RdmaFixture, string | null]>([
    [null, NO_PLUGIN, 'efa-node', null],
    ['ib', NO_PLUGIN, 'efa-node', 'IB'],
    ['efa', pluginFound('aws-ofi-nccl', '1.14.2'), 'efa-node', 'Libfabric'],
    ['efa', pluginFound('aws-ofi-nccl'), 'efa-node', 'AWS Libfabric'],
    ['efa', NO_PLUGIN, 'efa-node', 'AWS Libfabric'],
    ['rdma', NO_PLUGIN, 'ib-dgx', 'IB'],
    ['rdma', pluginFound('aws-ofi-nccl', '1.12.1'), 'efa-node', 'AWS Libfabric'],
  ])('NCCL_NET under %s (%#)', (required, search, fixture, net) => {
    expect(requiredNcclNet(required, search, loadRdmaFacts(fixture).rdma)).toBe(net);
  });
});

describe('GPUDirect-TCPX/TCPXO', () => {
  it('the GPU NICs: its list, else the gVNICs but its control NIC', () => {
    expect(
      pluginNics(pluginFound('gpudirect-tcpx'), A3_HIGH, {
        NCCL_GPUDIRECTTCPX_SOCKET_IFNAME: 'eth1,eth2',
      }),
    ).toMatchObject({ nics: ['eth1', 'eth2'], ctrl: 'eth0' });
    expect(pluginNics(pluginFound('gpudirect-tcpx'), A3_HIGH, {})).toMatchObject({
      nics: ['eth1', 'eth2', 'eth3', 'eth4'],
      by: 'the gVNICs (PCI vendor 0x1ae0) but its control NIC',
      ctrl: 'eth0',
    });
    expect(
      pluginNics(pluginFound('tcpxo'), A3_HIGH, { NCCL_FASTRAK_CTRL_DEV: 'eth4' })?.nics,
    ).toEqual(['eth0', 'eth1', 'eth2', 'eth3']);
    expect(pluginNics(pluginFound('aws-ofi-nccl'), A3_HIGH, {})).toBeNull();
  });

  it('transport plugin, naming the GPU NICs and the host NIC', () => {
    const { verdict } = assess(null, pluginFound('gpudirect-tcpx'), { interfaces: A3_HIGH });
    expect(verdict.kind).toBe('plugin');
    expect(verdict.reason).toContain(
      "carries the data over the GPU NICs eth1, eth2, eth3, eth4 (the gVNICs (PCI vendor 0x1ae0) but its control NIC); the socket interface carries NCCL's bootstrap only (the host NIC, eth0)",
    );
  });

  it('is not RDMA: --require-transport rdma is not met by it', () => {
    const { unmet } = assess(null, pluginFound('tcpxo'), { required: 'rdma', interfaces: A3_HIGH });
    expect(unmet?.exitCode).toBe(EXIT.noInterface);
  });

  it('another plugin: transport plugin, what it drives unknown', () => {
    expect(assess(null, pluginFound('other')).verdict.reason).toContain(
      'another net plugin, which NCCL tries before IB and sockets',
    );
  });
});
