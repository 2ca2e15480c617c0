/**
 * A new NCCL is one record (src/nccl/releases.ts). This file adds a made-up
 * NCCL 2.99.1 to the shipped records, as a newcomer adds 2.30: new default
 * interface rules (a compose bridge `br-*` excluded too) and another
 * bootstrap log line; then its rules' name, NCCL's modelled pick and
 * explain follow it with no other edit. The record is a fixture of this
 * test; nccl-run does not ship it.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ncclBehaviour, ncclRules } from '../../../src/nccl/behaviour.js';
import { ncclPick } from '../../../src/nccl/nccl-pick.js';
import { NCCL_RELEASES } from '../../../src/nccl/releases.js';
import { compareVersions } from '../../../src/version-order.js';
import { explainInProcess } from '../../fixtures/explain-in-process.js';
import { factsPath, loadFacts } from '../../fixtures/facts/facts-fixtures.js';
import { makeVenvs } from '../../fixtures/venv.js';

vi.mock('../../../src/nccl/releases.js', async (importOriginal) => {
  const shipped = await importOriginal<typeof import('../../../src/nccl/releases.js')>();
  return {
    ...shipped,
    NCCL_RELEASES: [
      ...shipped.NCCL_RELEASES,
      {
        version: '2.99.1',
        changes: 'made up: compose bridges (br-*) are excluded with docker, lo and virbr',
        sets: {
          interfaceRules: {
            defaultIfnames: ['ib', '^docker,lo,virbr,br-', 'docker', 'lo', 'virbr'],
            skipsNotRunning: true,
          },
          bootstrapLog: 'Bootstrap: using',
        },
      },
    ],
  };
});

const venvs = makeVenvs();
afterAll(() => venvs.remove());
const none = { ifname: null, family: null, commId: null };

describe('the shipped records', () => {
  it('are oldest first, so that a new release goes at the end', () => {
    const versions = NCCL_RELEASES.map((release) => release.version);
    expect([...versions].sort(compareVersions)).toEqual(versions);
  });
});

describe('a made-up NCCL 2.99.1, one record added', () => {
  it('names its rules, and closes the range of the rules before them', () => {
    expect(ncclRules('2.99.1')).toBe('2.99+');
    expect(ncclRules(null)).toBe('2.99+');
    expect(ncclRules('2.29.7')).toBe('2.28-2.98');
    expect(ncclRules('2.22.3')).toBe('2.18-2.27');
    expect(ncclBehaviour('2.99.1').bootstrapLog).toBe('Bootstrap: using');
  });

  it("NCCL's modelled pick follows its rules: no longer the compose bridge", () => {
    const facts = loadFacts('lab-docker-bridges');
    expect(ncclPick(facts, none, ncclRules('2.29.7'))).toEqual({
      interface: 'br-5f3a9c1d',
      address: '203.0.113.65',
    });
    expect(ncclPick(facts, none, ncclRules('2.99.1'))).toEqual({
      interface: 'ens1',
      address: '198.18.3.5',
    });
  });

  it("explain reads the wheel's version, names the rules and shows NCCL's own pick by them", async () => {
    const explain = (nccl: string) =>
      explainInProcess(
        [
          '--torchrun',
          venvs.venv(`nccl-${nccl}`, '2.14.1+cu130', nccl),
          '--facts',
          factsPath('lab-docker-bridges'),
          '--iface',
          'ens1',
          '--verify',
          'none',
          '--nnodes=1',
          'train.py',
        ],
        { PATH: process.env.PATH ?? '', HOME: venvs.top },
      );
    const madeUp = await explain('2.99.1');
    expect(madeUp.status).toBe(0);
    expect(madeUp.json.nccl).toMatchObject({ version: '2.99.1', rules: '2.99+' });
    expect(madeUp.json.unmanaged).toMatchObject({ nccl: { interface: 'ens1' } });
    const shipped = await explain('2.29.7');
    expect(shipped.json.nccl).toMatchObject({ version: '2.29.7', rules: '2.28-2.98' });
    expect(shipped.json.unmanaged).toMatchObject({ nccl: { interface: 'br-5f3a9c1d' } });
  });
});
