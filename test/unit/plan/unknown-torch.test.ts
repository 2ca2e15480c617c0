/**
 * One warning where the torch is unknown (src/plan/unknown-torch.ts): what
 * each torch record would make of this job, where it differs from the
 * newest's, which nccl-run applies.
 */
import { describe, expect, it } from 'vitest';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { unknownTorchWarning } from '../../../src/plan/unknown-torch.js';
import { torchrunTable } from '../../../src/torch/torchrun-table.js';

const warn = (argv: string[], storeHost: { byName: boolean; byAddress: boolean } | null = null) =>
  unknownTorchWarning({
    launcher: ['apptainer', 'exec', 'torch.sif', 'torchrun'],
    why: 'an image file',
    entry: 'run',
    argv,
    env: {},
    cluster: null,
    applied: readJobShape(argv, {}, null, torchrunTable(null)),
    storeHost: storeHost && { ...storeHost, hostnameAddresses: [] },
  });

describe('unknownTorchWarning', () => {
  it('says nothing where every torch reads the job alike', () => {
    expect(warn(['--nnodes=2', '--master_addr=node01', 'train.py'])).toBeNull();
  });

  it('names the single-node rule it applied and what older torch would do', () => {
    expect(warn(['--nnodes=1', 'train.py'])).toBe(
      "the torch behind apptainer exec torch.sif torchrun is unknown (an image file): nccl-run reads its arguments as every torch it knows would and applies torch 2.14's rules, what current images ship, but torch 1.13 and 2.6 would run it as static at 127.0.0.1:29500; say which torch it is with --torch-version",
    );
  });

  it('names the torch that would refuse the command', () => {
    expect(warn(['--nnodes=2', '--master-addr=node01', 'train.py'])).toMatch(
      /but torch 1\.13 would refuse the command \(torchrun argument --master-addr \(its spelling: --master_addr\)/,
    );
  });

  it('names the torch whose store-host rule hosts the c10d store on no node', () => {
    expect(
      warn(['--nnodes=2', '--rdzv_backend=c10d', '--rdzv_endpoint=trainer-0', 'train.py'], {
        byName: false,
        byAddress: true,
      }),
    ).toMatch(
      /but torch 1\.13 would host the c10d store on no node \(add --rdzv-conf is_host=1 on this node\)/,
    );
  });
});
