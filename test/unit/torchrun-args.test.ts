import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseTorchrunArgs } from '../../src/job/torchrun-args.js';

/**
 * argv → what torchrun's argparse parser makes of it, up to the training script.
 * `torch113`: torch 1.13's own parser (python3 -m torch.distributed.run, the
 * Debian build of LAB.md) gives the same values, script and error; rows
 * without it use spellings or options 1.13 lacks, or differ on purpose (see why).
 */
interface Row {
  why: string;
  argv: string[];
  script?: number | null;
  /** dest → value given. */
  values?: Record<string, string>;
  /** dest → the option string matched, where the row is about spelling or abbreviation. */
  spelled?: Record<string, string>;
  flags?: string[];
  unrecognized?: string[];
  help?: boolean;
  error?: RegExp;
  torch113?: true;
}

const ROWS: Row[] = [
  { why: 'empty argv: no script', argv: [], script: null, torch113: true },
  { why: 'just the script', argv: ['train.py'], script: 0, torch113: true },
  {
    why: 'value as the next token',
    argv: ['--nnodes', '2', 'train.py'],
    values: { nnodes: '2' },
    script: 2,
    torch113: true,
  },
  {
    why: '= form, MIN:MAX',
    argv: ['--nnodes=2:4', 'train.py'],
    values: { nnodes: '2:4' },
    script: 1,
    torch113: true,
  },
  {
    why: 'underscore spellings, both forms',
    argv: ['--master_addr', '198.18.0.1', '--master_port=29501', 'train.py'],
    values: { master_addr: '198.18.0.1', master_port: '29501' },
    spelled: { master_addr: '--master_addr', master_port: '--master_port' },
    script: 3,
    torch113: true,
  },
  {
    why: 'dash spellings (torch >= 2)',
    argv: ['--master-addr=node1', '--master-port', '1234', 'train.py'],
    values: { master_addr: 'node1', master_port: '1234' },
    spelled: { master_addr: '--master-addr', master_port: '--master-port' },
    script: 3,
  },
  {
    why: 'unambiguous abbreviation, reported by its full spelling',
    argv: ['--master_a', 'node1', 'train.py'],
    values: { master_addr: 'node1' },
    spelled: { master_addr: '--master_addr' },
    script: 2,
    torch113: true,
  },
  {
    why: 'abbreviation with =',
    argv: ['--master-a=node1', 'train.py'],
    values: { master_addr: 'node1' },
    spelled: { master_addr: '--master-addr' },
    script: 1,
  },
  {
    why: 'prefix of both spellings of one option (1.13 has one spelling and takes it)',
    argv: ['--nproc', '8', 'train.py'],
    values: { nproc_per_node: '8' },
    script: 2,
    torch113: true,
  },
  {
    why: 'prefix of one option, = form',
    argv: ['--node_r=1', 'train.py'],
    values: { node_rank: '1' },
    script: 1,
    torch113: true,
  },
  {
    why: 'ambiguous: names every candidate',
    argv: ['--ma', 'x', 'train.py'],
    error:
      /--ma: ambiguous.*--max-restarts, --max_restarts, --master-addr, --master_addr, --master-port, --master_port/,
    torch113: true,
  },
  {
    why: 'ambiguous between a flag and an option',
    argv: ['--st', 'train.py'],
    error: /--st: ambiguous.*--standalone, --start-method/,
    torch113: true,
  },
  {
    why: 'ambiguous among the rdzv options',
    argv: ['--rdzv=c10d', 'train.py'],
    error: /ambiguous.*--rdzv-backend.*--rdzv-endpoint.*--rdzv-id.*--rdzv-conf/,
    torch113: true,
  },
  {
    why: 'ambiguous on main (--log-dir, --logs-specs), unique on 1.13 (--log_dir)',
    argv: ['--log', '/tmp/logs', 'train.py'],
    error: /ambiguous.*--log-dir.*--logs-specs/,
  },
  {
    why: 'ambiguous on main only: --local-ranks-filter, --local-addr',
    argv: ['--local', 'x', 'train.py'],
    error: /ambiguous.*--local-ranks-filter.*--local-addr/,
  },
  {
    why: '--= is a prefix of every long option',
    argv: ['--=x', 'train.py'],
    error: /ambiguous/,
    torch113: true,
  },
  {
    why: 'abbreviated flag',
    argv: ['--stan', 'train.py'],
    flags: ['standalone'],
    script: 1,
    torch113: true,
  },
  {
    why: '-m: the script is a module',
    argv: ['-m', 'pkg.train', '--lr', '0.1'],
    flags: ['module'],
    script: 1,
    torch113: true,
  },
  {
    why: '--module spelled out',
    argv: ['--module', 'pkg.train'],
    flags: ['module'],
    script: 1,
    torch113: true,
  },
  {
    why: '--no-python: the script is a program',
    argv: ['--no-python', 'bash', '-c', 'echo hi'],
    flags: ['no_python'],
    script: 1,
  },
  {
    why: '--no_python',
    argv: ['--no_python', '--nnodes', '2', './run.sh'],
    flags: ['no_python'],
    values: { nnodes: '2' },
    script: 3,
    torch113: true,
  },
  {
    why: '--run-path',
    argv: ['--run_path', '/abs/train.py'],
    flags: ['run_path'],
    script: 1,
    torch113: true,
  },
  {
    why: "script arguments that look like nccl-run's and torchrun's flags are never read",
    argv: ['train.py', '--iface', 'x', '--master-addr', 'y', '--nnodes', '9'],
    values: {},
    script: 0,
  },
  {
    why: 'an ambiguous-looking script argument is not read (Python 3.11 argparse would stop on it: pytorch#120601)',
    argv: ['train.py', '--ma', 'x', '--standalone'],
    flags: [],
    script: 0,
  },
  {
    why: 'after --, the first token is the script even if it looks like an option',
    argv: ['--', '--nnodes', '2'],
    values: {},
    script: 1,
    torch113: true,
  },
  {
    why: 'options, --, then the script and its arguments',
    argv: ['--nnodes', '2', '--', 'train.py', '--master_addr', 'x'],
    values: { nnodes: '2' },
    script: 3,
    torch113: true,
  },
  { why: 'a trailing -- leaves no script', argv: ['--nnodes', '2', '--'], script: null },
  {
    why: 'an empty string is a positional: the script',
    argv: ['', '--nnodes', '2'],
    values: {},
    script: 0,
    torch113: true,
  },
  {
    why: 'an empty value',
    argv: ['--master_addr', '', 'train.py'],
    values: { master_addr: '' },
    script: 2,
    torch113: true,
  },
  {
    why: 'an empty = value',
    argv: ['--master_addr=', 'train.py'],
    values: { master_addr: '' },
    script: 1,
    torch113: true,
  },
  {
    why: 'non-ASCII values and script',
    argv: ['--role', 'ノード', '--master_addr', 'nœud-1', 'entraîner.py', 'データ'],
    values: { role: 'ノード', master_addr: 'nœud-1' },
    script: 4,
    torch113: true,
  },
  {
    why: 'a value with spaces, quotes and $',
    argv: ['--log_dir', "/tmp/it's $HOME; x", 'train.py'],
    values: { log_dir: "/tmp/it's $HOME; x" },
    script: 2,
    torch113: true,
  },
  {
    why: 'short options with separate values',
    argv: ['-r', '3', '-t', '0:1', 'train.py'],
    values: { redirects: '3', tee: '0:1' },
    script: 4,
    torch113: true,
  },
  {
    why: 'short options with attached values',
    argv: ['-r3', '-t=1', 'train.py'],
    values: { redirects: '3', tee: '1' },
    script: 2,
    torch113: true,
  },
  {
    why: 'glued flags ending in an option with its value',
    argv: ['-mr3', 'pkg.train'],
    flags: ['module'],
    values: { redirects: '3' },
    script: 1,
    torch113: true,
  },
  {
    why: 'glued flags ending in an option whose value is the next token',
    argv: ['-mr', '3', 'pkg.train'],
    flags: ['module'],
    values: { redirects: '3' },
    script: 2,
    torch113: true,
  },
  {
    why: 'a flag given = value',
    argv: ['-m=1', 'pkg.train'],
    error: /-m=1: -m takes no value, and -1 is not a torchrun option/,
    torch113: true,
  },
  {
    why: 'an unknown letter glued to a flag',
    argv: ['-mx', 'pkg.train'],
    error: /-mx: -m takes no value, and -x is not a torchrun option/,
    torch113: true,
  },
  {
    why: 'a long flag given a value',
    argv: ['--standalone=1', 'train.py'],
    error: /--standalone=1: --standalone takes no value, got '1'/,
    torch113: true,
  },
  {
    why: 'a missing value at the end',
    argv: ['--master_addr'],
    error: /--master_addr: expected one argument$/,
    torch113: true,
  },
  {
    why: 'an option where the value should be',
    argv: ['--master_addr', '--nnodes', '2', 'train.py'],
    error: /--master_addr: expected one argument, got '--nnodes'/,
    torch113: true,
  },
  {
    why: '-- where the value should be',
    argv: ['--master_addr', '--', 'train.py'],
    error: /expected one argument, got '--'/,
    torch113: true,
  },
  {
    why: 'a negative number is a value, not an option',
    argv: ['--node_rank', '-1', 'train.py'],
    values: { node_rank: '-1' },
    script: 2,
    torch113: true,
  },
  {
    why: 'a negative number is a positional',
    argv: ['-1', 'x'],
    script: 0,
    torch113: true,
  },
  {
    why: 'type=int rejects a word',
    argv: ['--master_port', 'abc', 'train.py'],
    error: /--master_port: bad value 'abc': expected an integer/,
    torch113: true,
  },
  {
    why: 'type=int takes what Python int() takes: fullwidth digits',
    argv: ['--master_port', '２９５００', 'train.py'],
    values: { master_port: '２９５００' },
    script: 2,
    torch113: true,
  },
  {
    why: 'type=int takes what Python int() takes: spaces and _',
    argv: ['--master_port', ' 29_500\n', 'train.py'],
    values: { master_port: ' 29_500\n' },
    script: 2,
    torch113: true,
  },
  {
    why: 'type=float',
    argv: ['--monitor_interval', '.5', 'train.py'],
    values: { monitor_interval: '.5' },
    script: 2,
    torch113: true,
  },
  {
    why: 'type=float rejects a word',
    argv: ['--monitor_interval', 'soon', 'train.py'],
    error: /--monitor_interval: bad value 'soon': expected a number/,
    torch113: true,
  },
  {
    why: 'choices',
    argv: ['--start_method', 'thread', 'train.py'],
    error: /--start_method: bad value 'thread': expected one of spawn, fork, forkserver/,
    torch113: true,
  },
  {
    why: 'an unknown option takes no value; what follows is the script',
    argv: ['--frobnicate', 'bar', 'train.py'],
    unrecognized: ['--frobnicate'],
    script: 1,
  },
  {
    why: 'one quoted token with a space is a positional',
    argv: ['--nnodes 2', 'train.py'],
    values: {},
    script: 0,
    torch113: true,
  },
  { why: 'a lone dash is a positional', argv: ['-', 'x'], script: 0, torch113: true },
  {
    why: 'the last value wins',
    argv: ['--nnodes', '2', '--nnodes=3', 'train.py'],
    values: { nnodes: '3' },
    script: 3,
    torch113: true,
  },
  {
    why: 'the last value wins across spellings',
    argv: ['--nproc_per_node', '8', '--nproc-per-node=4', 'train.py'],
    values: { nproc_per_node: '4' },
    spelled: { nproc_per_node: '--nproc-per-node' },
    script: 3,
  },
  {
    why: 'IPv6 endpoint in brackets',
    argv: ['--rdzv_endpoint', '[2001:db8::1]:29400', 'train.py'],
    values: { rdzv_endpoint: '[2001:db8::1]:29400' },
    script: 2,
    torch113: true,
  },
  {
    why: 'rdzv-conf',
    argv: ['--rdzv_conf=is_host=1,read_timeout=60', 'train.py'],
    values: { rdzv_conf: 'is_host=1,read_timeout=60' },
    script: 1,
    torch113: true,
  },
  {
    why: '--local-addr (torch >= 2)',
    argv: ['--local-addr', '198.18.0.2', 'train.py'],
    values: { local_addr: '198.18.0.2' },
    script: 2,
  },
  {
    why: '--help stops reading',
    argv: ['--help', '--nnodes', 'x'],
    help: true,
    script: null,
  },
  { why: 'abbreviated help', argv: ['--he'], help: true, script: null },
  { why: '-h glued after a flag', argv: ['-mh'], help: true, flags: ['module'], script: null },
  {
    why: 'an error before --help still stops torchrun',
    argv: ['--master_port', 'x', '--help'],
    error: /--master_port: bad value 'x'/,
    torch113: true,
  },
];

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
