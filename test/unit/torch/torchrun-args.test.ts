import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { certainRefusal, parseTorchrunArgs } from '../../../src/torch/torchrun-args.js';
import { type TorchEntry, torchrunTable } from '../../../src/torch/torchrun-table.js';
import { ROWS } from '../../fixtures/torchrun-rows.js';

describe('parseTorchrunArgs', () => {
  it.each(ROWS)('$why: $argv', (row) => {
    if (row.error !== undefined) {
      expect(() => parseTorchrunArgs(row.argv)).toThrow(UsageError);
      expect(() => parseTorchrunArgs(row.argv)).toThrow(row.error);
      return;
    }
    const parsed = parseTorchrunArgs(row.argv);
    expect(parsed.scriptIndex).toBe(row.script);
    if (row.values !== undefined) {
      expect(Object.fromEntries([...parsed.values].map(([dest, v]) => [dest, v.value]))).toEqual(
        row.values,
      );
    }
    for (const [dest, optionString] of Object.entries(row.spelled ?? {})) {
      expect(parsed.values.get(dest)?.optionString).toBe(optionString);
    }
    if (row.flags !== undefined) expect([...parsed.flags.keys()]).toEqual(row.flags);
    expect(parsed.unrecognized).toEqual(row.unrecognized ?? []);
    expect(parsed.help).toBe(row.help ?? false);
  });

  it('never reads past the script, whatever follows', () => {
    const tail = ['--master-addr', '--', '-mx', '--ma', '--standalone=1', ''];
    const parsed = parseTorchrunArgs(['--nnodes=2', 'train.py', ...tail]);
    expect(parsed.scriptIndex).toBe(1);
    expect([...parsed.values.keys()]).toEqual(['nnodes']);
  });
});

describe('certainRefusal: what a known torch certainly refuses, refused before any check', () => {
  const refusal = (argv: string[], version: string | null, entry: TorchEntry = 'run') =>
    certainRefusal(parseTorchrunArgs(argv, torchrunTable(version, entry)), version ?? '');

  it("names each option the torch lacks, with that torch's spelling", () => {
    const argv = ['--master-addr=n1', '--local-addr', '198.18.0.2', '--nnodes=2', 'x'];
    const refused = refusal(argv, '1.13.1');
    expect(refused).toBeInstanceOf(UsageError);
    expect(refused?.exitCode).toBe(64);
    expect(refused?.message).toBe(
      'torchrun argument --master-addr (its spelling: --master_addr), --local-addr: torch 1.13.1\'s torchrun has no such option and would stop at them with "unrecognized arguments"; write its spelling',
    );
    expect(refusal(argv, '2.6.0')).toBeNull();
    expect(refusal(['--log-line-prefix-template=[x]', 'x'], '2.6.0')?.message).toMatch(
      /^torchrun argument --log-line-prefix-template: torch 2\.6\.0's torchrun has no such option/,
    );
  });

  it('refuses an option no torch has, which an unknown torch lets through to torchrun', () => {
    expect(refusal(['--nodes=2', 'x'], '2.14.1')?.message).toMatch(
      /^torchrun argument --nodes: torch 2\.14\.1's torchrun has no such option/,
    );
    expect(refusal(['--nodes=2', 'x'], null)).toBeNull();
  });

  it("refuses 2.x's --nproc, ambiguous between its two spellings, which 1.13 takes", () => {
    expect(refusal(['--nproc=8', 'x'], '2.6.0')?.message).toBe(
      'torchrun argument --nproc=8: torch 2.6.0\'s torchrun stops at it with "ambiguous option: could match --nproc-per-node, --nproc_per_node"; write the option in full',
    );
    expect(refusal(['--nproc=8', 'x'], '1.13.1')).toBeNull();
  });

  it("knows launch.py's --use-env, which torchrun itself refuses", () => {
    expect(refusal(['--use_env', '--nnodes=1', 'x'], '2.6.0', 'launch')).toBeNull();
    expect(refusal(['--use_env', '--nnodes=1', 'x'], '2.6.0', 'run')?.message).toMatch(
      /--use_env: torch 2\.6\.0's torchrun has no such option/,
    );
  });

  it('refuses nothing where torchrun prints its help, or the torch has no record', () => {
    expect(refusal(['--master-addr=n1', '--help'], '1.13.1')).toBeNull();
    expect(refusal(['--master-addr=n1', 'x'], '2.10.0')).toBeNull();
  });
});
