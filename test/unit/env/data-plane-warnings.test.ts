/**
 * The warnings about the socket transport's devices (src/env/data-plane-warnings.ts)
 * over users' hosts: NVIDIA/nccl#177 (a kept `bond0` that also matches
 * bond0.2973 and a link-local-only bond0.2973.1).
 */
import { describe, expect, it } from 'vitest';
import { type DataPlaneFacts, dataPlaneWarnings } from '../../../src/env/data-plane-warnings.js';
import { ncclDevices } from '../../../src/nccl/nccl-pick.js';
import { loadFacts } from '../../fixtures/facts/facts-fixtures.js';

const facts = loadFacts('bond-vlan-nccl-177');
const input = (ifname: string | null, master = '198.18.42.1'): DataPlaneFacts => ({
  facts,
  devices: ncclDevices(facts, { ifname, family: null, commId: null }, '2.28+'),
  reaches: 'bond0',
  masterAddresses: [master],
  keptIfname:
    ifname === null ? null : { value: ifname, from: { name: 'NCCL_SOCKET_IFNAME', from: 'env' } },
  singleNode: false,
});

describe('dataPlaneWarnings', () => {
  it('a kept prefix: each device that cannot carry the job, named, with the exact value that avoids it', () => {
    const warnings = dataPlaneWarnings(input('bond0'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /NCCL_SOCKET_IFNAME='bond0' \(yours.*\[0\]bond0 \[1\]bond0\.2973 \[2\]bond0\.2973\.1.*device \[1\] bond0\.2973 198\.19\.106\.189 cannot carry them \(not on the master's network \(198\.18\.42\.1\)\); set NCCL_SOCKET_IFNAME==bond0\b/,
    );
    expect(warnings[1]).toMatch(
      /device \[2\] bond0\.2973\.1 fe80::.*link-local only.*NCCL_SOCKET_IFNAME==bond0/,
    );
  });

  it("NCCL's defaults giving several: the same, said of the defaults", () => {
    expect(dataPlaneWarnings(input(null))[0]).toMatch(/every device NCCL's defaults gives/);
  });

  it('one device, or a single-node job: nothing', () => {
    expect(dataPlaneWarnings(input('=bond0'))).toEqual([]);
    expect(dataPlaneWarnings({ ...input('bond0'), singleNode: true })).toEqual([]);
  });

  it('a master on the VLAN: bond0.2973 carries it, the link-local one still cannot', () => {
    const warnings = dataPlaneWarnings({ ...input('bond0', '198.19.0.1'), reaches: 'bond0.2973' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /device \[2\] bond0\.2973\.1 .*set NCCL_SOCKET_IFNAME==bond0\.2973\b/,
    );
  });
});
