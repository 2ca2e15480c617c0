import { describe, expect, it } from 'vitest';
import { splitArgv } from '../../../src/cli/split-argv.js';
import { UsageError } from '../../../src/errors.js';

type Flags = Record<string, string | true>;

// SPEC "Parsing rule": argv → [command, nccl-run's flags, torchrun's tokens].
const rows: [string, string[], string, Flags, string[]][] = [
  ['nothing at all', [], 'run', {}, []],
  ['only torchrun args', ['--nnodes=2', 'train.py'], 'run', {}, ['--nnodes=2', 'train.py']],
  [
    'own flag with a separate value',
    ['--iface', 'ens3f0', '--nnodes=2', 'train.py'],
    'run',
    { iface: 'ens3f0' },
    ['--nnodes=2', 'train.py'],
  ],
  [
    'own flag with =value',
    ['--iface=ens3f0', 'train.py'],
    'run',
    { iface: 'ens3f0' },
    ['train.py'],
  ],
  [
    'SPEC example: --iface after the script is the script’s',
    ['--iface', 'ens3f0', '--nnodes=2', '--nproc-per-node=8', 'train.py', '--iface', 'x'],
    'run',
    { iface: 'ens3f0' },
    ['--nnodes=2', '--nproc-per-node=8', 'train.py', '--iface', 'x'],
  ],
  [
    'boolean flags take no value',
    ['--dry-run', '--force', 'train.py'],
    'run',
    { 'dry-run': true, force: true },
    ['train.py'],
  ],
  [
    'a boolean with =value keeps the value for config',
    ['--force=no', 'x.py'],
    'run',
    { force: 'no' },
    ['x.py'],
  ],
  [
    '-- ends own options and is dropped',
    ['--dry-run', '--', '--iface', 'x'],
    'run',
    { 'dry-run': true },
    ['--iface', 'x'],
  ],
  ['a script literally named explain', ['--', 'explain'], 'run', {}, ['explain']],
  [
    'subcommand only as the first token',
    ['--dry-run', 'explain'],
    'run',
    { 'dry-run': true },
    ['explain'],
  ],
  [
    'explain with options then torchrun args',
    ['explain', '--json', '--master-addr=n1', 'x.py'],
    'explain',
    { json: true },
    ['--master-addr=n1', 'x.py'],
  ],
  [
    'env with --format value',
    ['env', '--format', 'dotenv', '--nnodes', '2'],
    'env',
    { format: 'dotenv' },
    ['--nnodes', '2'],
  ],
  ['check with --verify peers', ['check', '--verify', 'peers'], 'check', { verify: 'peers' }, []],
  [
    'an abbreviation of ours is not ours',
    ['--ifa', 'eth0', 'train.py'],
    'run',
    {},
    ['--ifa', 'eth0', 'train.py'],
  ],
  [
    'a value that looks like a flag is still the value',
    ['--torchrun', '--weird', 'x.py'],
    'run',
    { torchrun: '--weird' },
    ['x.py'],
  ],
  ['the last of a repeated option wins', ['--iface', 'a', '--iface=b'], 'run', { iface: 'b' }, []],
  ['second -- goes to torchrun', ['--', '--', 'a'], 'run', {}, ['--', 'a']],
  [
    'empty strings and spaces pass untouched',
    ['--iface', 'lo', '', 'a b', '$(x);'],
    'run',
    { iface: 'lo' },
    ['', 'a b', '$(x);'],
  ],
  ['-h is ours', ['-h'], 'run', { help: true }, []],
  [
    'torchrun short option stops ours',
    ['-m', 'pkg.mod', '--iface', 'x'],
    'run',
    {},
    ['-m', 'pkg.mod', '--iface', 'x'],
  ],
  [
    'init takes its template word and --out',
    ['init', 'slurm', '--out', 'job.sbatch'],
    'init',
    { out: 'job.sbatch' },
    [],
  ],
  ['--out is init’s only', ['--out', 'x'], 'run', {}, ['--out', 'x']],
  [
    'init takes --force and --help, and no job option (init refuses what is left)',
    ['init', 'slurm', '--force', '--help', '--iface', 'x'],
    'init',
    { force: true, help: true },
    ['--iface', 'x'],
  ],
  [
    'non-ASCII passes untouched',
    ['--iface', 'lo', 'träin.py', '—x'],
    'run',
    { iface: 'lo' },
    ['träin.py', '—x'],
  ],
];

describe('splitArgv', () => {
  it.each(rows)('%s', (_name, argv, command, flags, torchrun) => {
    const split = splitArgv(argv);
    expect(split.command).toBe(command);
    expect(split.flags).toEqual(flags);
    expect(split.torchrun).toEqual(torchrun);
  });

  it("keeps audit's paths apart from its flags, in any order; after -- every word is a path", () => {
    expect(splitArgv(['audit', 'logs/', '--json', '-', 'more.txt'])).toEqual({
      command: 'audit',
      commandArgs: ['logs/', '-', 'more.txt'],
      flags: { json: true },
      torchrun: [],
    });
    expect(splitArgv(['audit', '--', '--odd-name', '--json']).commandArgs).toEqual([
      '--odd-name',
      '--json',
    ]);
    // A job option is not audit's: it is left over, and audit refuses it (64).
    expect(splitArgv(['audit', '--iface', 'x', 'logs/']).torchrun).toEqual([
      '--iface',
      'x',
      'logs/',
    ]);
  });

  it('refuses an option of ours without its value', () => {
    expect(() => splitArgv(['--verify'])).toThrow(UsageError);
    expect(() => splitArgv(['--verify'])).toThrow(/^--verify: missing value$/);
  });

  it('refuses a boolean given a separate value: `--dry-run false` would run torchrun `false`', () => {
    expect(() => splitArgv(['--dry-run', 'false', 'train.py'])).toThrow(
      "--dry-run takes no separate value, so 'false' would be torchrun's first word; write --dry-run, or --dry-run=false",
    );
    expect(splitArgv(['--dry-run=false', 'train.py']).flags).toEqual({ 'dry-run': 'false' });
  });

  it('keeps init’s template word apart from its options', () => {
    expect(splitArgv(['init', 'k8s', '--force']).commandArgs).toEqual(['k8s']);
  });
});
