/**
 * A new torch is one record (src/torch/releases.ts). This file adds a
 * made-up torch 2.99 to the shipped records, as a newcomer adds 2.15: a new
 * option defined in the record itself, another --master-port default, and
 * 2.14's single-node rule undone; then the parser, the job's shape and
 * explain follow it with no other edit. The record is a fixture of this
 * test; nccl-run does not ship it.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { TORCH_RELEASES, type TorchRelease } from '../../../src/torch/releases.js';
import { parseTorchrunArgs } from '../../../src/torch/torchrun-args.js';
import { torchrunTable } from '../../../src/torch/torchrun-table.js';
import { compareVersions } from '../../../src/version-order.js';
import { explainInProcess } from '../../fixtures/explain-in-process.js';
import { makeVenvs } from '../../fixtures/venv.js';

vi.mock('../../../src/torch/releases.js', async (importOriginal) => {
  const shipped = await importOriginal<typeof import('../../../src/torch/releases.js')>();
  const madeUp: TorchRelease = {
    ...shipped.TORCH_2_14,
    version: '2.99',
    changes: 'made up: --rendezvous-grace; --master-port defaults to 29600; no single-node c10d',
    torchrunOptions: [
      ...shipped.TORCH_2_14.torchrunOptions,
      shipped.value(['--rendezvous-grace', '--rendezvous_grace'], 'int'),
    ],
    defaults: { ...shipped.TORCH_2_14.defaults, masterPort: 29_600 },
    singleNode: 'static',
  };
  return { ...shipped, TORCH_RELEASES: [...shipped.TORCH_RELEASES, madeUp] };
});

const venvs = makeVenvs();
afterAll(() => venvs.remove());

describe('the shipped records', () => {
  it('are oldest first, so that a new release goes at the end', () => {
    const versions = TORCH_RELEASES.map((release) => release.version);
    expect([...versions].sort(compareVersions)).toEqual(versions);
  });

  it('name every option once in each release', () => {
    for (const release of TORCH_RELEASES) {
      const names = release.torchrunOptions.map((entry) =>
        typeof entry === 'string' ? entry : entry.dest,
      );
      expect(new Set(names).size, release.version).toBe(names.length);
    }
  });
});

describe('a made-up torch 2.99, one record added', () => {
  it('the parser reads its new option, and abbreviations of it', () => {
    const args = parseTorchrunArgs(['--rendezvous-g', '30', 'train.py'], torchrunTable('2.99.0'));
    expect(args.values.get('rendezvous_grace')).toEqual({
      value: '30',
      optionString: '--rendezvous-grace',
    });
    expect(args.scriptIndex).toBe(2);
    expect(() =>
      parseTorchrunArgs(['--rendezvous-grace=soon', 'x'], torchrunTable('2.99.0')),
    ).toThrow(/--rendezvous-grace: bad value 'soon': expected an integer/);
  });

  it("torch 2.14 has no such option: it is another version's, and the value is still skipped", () => {
    const args = parseTorchrunArgs(
      ['--rendezvous-grace', '30', 'train.py'],
      torchrunTable('2.14.1'),
    );
    expect(args.otherVersions).toEqual(['--rendezvous-grace']);
    expect(args.scriptIndex).toBe(2);
  });

  it('its defaults and single-node rule make the job', () => {
    const shape = readJobShape(['--nnodes=1', 'train.py'], {}, null, torchrunTable('2.99.1+cu140'));
    expect(shape).toMatchObject({
      rdzvBackend: 'static',
      master: { host: '127.0.0.1', port: 29_600 },
    });
  });

  it('explain names it, reads argv by it and takes its defaults', async () => {
    const torchrun = venvs.venv('t299', '2.99.1+cu140', null);
    const { status, json } = await explainInProcess(
      [
        '--torchrun',
        torchrun,
        '--iface',
        'lo',
        '--verify',
        'none',
        '--nnodes=1',
        '--rendezvous-grace',
        '30',
        'train.py',
      ],
      { PATH: process.env.PATH ?? '', HOME: venvs.top },
    );
    expect(status).toBe(0);
    expect(json.torch).toMatchObject({ version: '2.99.1+cu140' });
    expect(json.job).toMatchObject({ rdzvBackend: 'static' });
    expect(json.master).toMatchObject({ host: '127.0.0.1', port: 29_600 });
    expect(json.warnings).toEqual([]);
    expect(json.command).toEqual([torchrun, '--nnodes=1', '--rendezvous-grace', '30', 'train.py']);
  });
});
