/**
 * What NCCL and Gloo will bind, managed and unmanaged (src/env/nccl-picture.ts),
 * over the NCCL oracle's hosts.
 */
import { describe, expect, it } from 'vitest';
import { ncclPicture, type PictureInput } from '../../../src/env/nccl-picture.js';
import { runChain } from '../../../src/resolve/run-chain.js';
import { DEFAULT_CHAIN } from '../../../src/resolve/strategies/index.js';
import { loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';

const facts = loadFacts('lab-mgmt-first');
const context = makeContext({
  master: { host: 'master', addresses: ['198.18.2.1'] },
  ncclRules: '2.18-2.27',
});
const decision = runChain(DEFAULT_CHAIN, facts, context);
const OURS = { NCCL_SOCKET_IFNAME: '=eth1', NCCL_SOCKET_FAMILY: 'AF_INET' };

function picture(overrides: Partial<PictureInput>) {
  return ncclPicture({
    facts,
    context,
    decision,
    userNcclEnv: {},
    jobNcclEnv: OURS,
    userEnv: {},
    keptIfname: null,
    commIdAddress: null,
    ncclVersion: '2.22.3',
    hostnameAddresses: ['198.18.100.5'],
    ...overrides,
  });
}

describe('ncclPicture', () => {
  it("with nccl-run's variables NCCL binds the decision; unmanaged, both take the management NIC", () => {
    expect(picture({})).toEqual({
      pick: { interface: 'eth1', address: '198.18.2.5' },
      // nccl-run's `=eth1`: one device, which carries the job; no device warnings.
      devices: [{ interface: 'eth1', address: '198.18.2.5' }],
      deviceWarnings: [],
      unmanaged: {
        nccl: { interface: 'eth0', address: '198.18.100.5' },
        gloo: { interface: 'eth0', address: '198.18.100.5' },
        // NCCL's defaults take every interface but docker and lo: each is a device.
        ncclDevices: expect.arrayContaining([{ interface: 'eth0', address: '198.18.100.5' }]),
      },
      settingWarnings: [],
      bindWarning: null,
    });
  });

  it("a kept value (here from NCCL's files, under the job's environment) decides NCCL's pick", () => {
    const fromFile = { NCCL_SOCKET_IFNAME: '^docker,lo' };
    const kept = picture({
      userNcclEnv: fromFile,
      jobNcclEnv: { ...fromFile, NCCL_SOCKET_FAMILY: 'AF_INET' },
      keptIfname: {
        value: '^docker,lo',
        from: { name: 'NCCL_SOCKET_IFNAME', from: 'nccl-conf', file: '/etc/nccl.conf' },
      },
    });
    expect(kept.pick).toEqual({ interface: 'eth0', address: '198.18.100.5' });
    expect(kept.settingWarnings).toHaveLength(1);
    // nccl-run's own value, in the environment, beats the file (--force).
    expect(picture({ userNcclEnv: fromFile, jobNcclEnv: { ...fromFile, ...OURS } }).pick).toEqual({
      interface: 'eth1',
      address: '198.18.2.5',
    });
  });

  it('NCCL 2.29.7 with NCCL_COMM_ID: the bootstrap binds lo by the inverted test, and the warning says so', () => {
    const commId = { NCCL_COMM_ID: '198.18.100.1:29600' };
    const inverted = picture({
      userNcclEnv: commId,
      jobNcclEnv: { ...commId, ...OURS },
      commIdAddress: '198.18.100.1',
      ncclVersion: '2.29.7',
    });
    expect(inverted.pick).toEqual({ interface: 'lo', address: '127.0.0.1' });
    expect(inverted.unmanaged.nccl).toEqual({ interface: 'lo', address: '127.0.0.1' });
    expect(inverted.settingWarnings[0]).toContain(
      'listens on the first IPv4 address whose network does NOT hold that address (NCCL 2.29.7 inverts this test, NVIDIA/nccl PR #2047, fixed in 2.30.3)',
    );
    expect(inverted.settingWarnings[0]).toContain('or run NCCL 2.30.3 or later');
    const fixed = picture({
      userNcclEnv: commId,
      jobNcclEnv: { ...commId, ...OURS },
      commIdAddress: '198.18.100.1',
      ncclVersion: '2.30.3',
    });
    expect(fixed.pick).toEqual({ interface: 'eth0', address: '198.18.100.5' });
    expect(fixed.settingWarnings[0]).not.toContain('inverts');
  });
});
