/**
 * torchrun per torch version (src/torch/torchrun-table.ts): which table a
 * torch.__version__ gets, and what changes with it: 2.14's single-node rule
 * (run.py run(), read in Debian sid's torch 2.14.1), abbreviations resolved
 * among that version's options, and options only another version has.
 */
import { describe, expect, it } from 'vitest';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { parseTorchrunArgs } from '../../../src/torch/torchrun-args.js';
import {
  TORCHRUN_TABLES,
  type TorchrunTable,
  torchrunTable,
} from '../../../src/torch/torchrun-table.js';
import { ROWS, type TorchrunRow } from '../../fixtures/torchrun-rows.js';

const T = Object.fromEntries(TORCHRUN_TABLES) as Record<'1.13' | '2.6' | '2.14', TorchrunTable>;

describe('torchrunTable', () => {
  it.each([
    ['1.13.0a0', '1.13'],
    ['2.6.0+debian', '2.6'],
    ['2.14.1+cu130', '2.14'],
    ['2.5.1+cu124', null],
    [null, null],
  ])('%s → %s', (version, torch) => {
    expect(torchrunTable(version).torch).toBe(torch);
  });

  it('a torch newer than the tables reads by the union, with the newest single-node rule', () => {
    expect(torchrunTable('2.15.0')).toMatchObject({ torch: null, singleNodeC10d: true });
    expect(torchrunTable('2.5.1')).toMatchObject({ torch: null, singleNodeC10d: false });
  });
});

describe("2.14's single-node rule", () => {
  const shape = (argv: string[], table = T['2.14'], env: NodeJS.ProcessEnv = {}) =>
    readJobShape([...argv, 'train.py'], env, null, table);

  it('a static job of one node with no endpoint and no port is c10d on localhost:0', () => {
    for (const argv of [[], ['--nnodes=1'], ['--nnodes=1', '--master-addr=198.18.0.9']]) {
      expect(shape(argv)).toMatchObject({ rdzvBackend: 'c10d', master: null, nodeRank: null });
    }
    expect(shape(['--nnodes=1'], T['2.6'])).toMatchObject({
      rdzvBackend: 'static',
      master: { host: '127.0.0.1', port: 29500 },
    });
  });

  it.each([
    ['a port', ['--master-port=29501'], {}],
    ['PET_MASTER_PORT', [], { PET_MASTER_PORT: '29501' }],
    ['MASTER_PORT, which nccl-run exports as PET_MASTER_PORT', [], { MASTER_PORT: '29501' }],
    ['two nodes', ['--nnodes=2'], {}],
    ['an endpoint', ['--rdzv-endpoint=198.18.0.9:29501'], {}],
  ])('stays static with %s', (_case, argv, env) => {
    expect(shape(argv, T['2.14'], env).rdzvBackend).toBe('static');
  });
});

describe('parseTorchrunArgs per version', () => {
  it("resolves an abbreviation among the version's own options", () => {
    expect(parseTorchrunArgs(['--log-', 'd', 'x'], T['2.6']).values.get('log_dir')?.value).toBe(
      'd',
    );
    expect(() => parseTorchrunArgs(['--log-', 'd', 'x'], T['2.14'])).toThrow(/ambiguous/);
  });

  it("reads another version's option as that version does, and lists it", () => {
    const old = parseTorchrunArgs(
      ['--master-addr=n1', '--log-line-prefix-template', '[x]', 'x'],
      T['1.13'],
    );
    expect(old.values.get('master_addr')?.value).toBe('n1');
    expect(old.scriptIndex).toBe(3);
    expect(old.otherVersions).toEqual(['--master-addr=n1', '--log-line-prefix-template']);
    expect(parseTorchrunArgs(['--master-addr=n1', 'x'], T['2.6']).otherVersions).toEqual([]);
  });

  it("2.14's --print-completion prints and exits, as --help does", () => {
    expect(parseTorchrunArgs(['--print-completion', 'bash', '--nnodes=2'], T['2.14']).help).toBe(
      true,
    );
    expect(() => parseTorchrunArgs(['--print-completion', 'fish'], T['2.14'])).toThrow(
      /expected one of bash, zsh, tcsh/,
    );
  });

  it('PET_ variables of options the version lacks are not read', () => {
    const env = { PET_LOCAL_ADDR: '198.18.0.2' };
    expect(readJobShape(['x'], env, null, T['1.13']).localAddr).toBeNull();
    expect(readJobShape(['x'], env, null, T['2.6']).localAddr?.value).toBe('198.18.0.2');
  });
});

/** The row's reading, or the message it is refused with. */
function reading(row: TorchrunRow, table: TorchrunTable) {
  try {
    const parsed = parseTorchrunArgs(row.argv, table);
    return {
      values: Object.fromEntries([...parsed.values].map(([dest, v]) => [dest, v.value])),
      script: parsed.scriptIndex,
      help: parsed.help,
    };
  } catch (error) {
    // Each version names its own candidates of an ambiguous abbreviation.
    return (error as Error).message.replace(/could match [^"]*/, 'could match ...');
  }
}

describe("the argv table under each version's table (the real parsers: test/e2e/torchrun-parser.test.ts)", () => {
  it.each(ROWS.filter((row) => row.torch113))('1.13 reads as the union: $why', (row) => {
    expect(reading(row, T['1.13'])).toEqual(reading(row, T['2.14']));
  });
  it.each(ROWS.filter((row) => !row.torch26))('2.6 reads as the union: $why', (row) => {
    expect(reading(row, T['2.6'])).toEqual(reading(row, T['2.14']));
  });
});
