/**
 * One table of exit statuses (src/exit-status.ts), which the typed errors,
 * --help, the README and the shell entry all follow. The shell
 * (bin/nccl-run) cannot import it: each `exit N` there names its status in
 * a comment and is held to the table here, as are its trapped signals'
 * 128 + N and the README's table.
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EPILOGUE } from '../../src/cli/parser.js';
import { ConfigError, NoInterfaceError, UnreachableError, UsageError } from '../../src/errors.js';
import {
  EXIT,
  EXIT_STATUS,
  type ExitName,
  exitStatusSummary,
  PASSED_THROUGH,
  signalStatus,
} from '../../src/exit-status.js';

const root = join(import.meta.dirname, '..', '..');
const shell = readFileSync(join(root, 'bin/nccl-run'), 'utf8');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

describe('the table', () => {
  it('holds each code once', () => {
    const codes = Object.values(EXIT_STATUS).map((entry) => entry.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('gives the typed errors their status', () => {
    expect(new UsageError('x').exitCode).toBe(64);
    expect(new ConfigError('x').exitCode).toBe(EXIT.config);
    expect(new NoInterfaceError('x').exitCode).toBe(EXIT_STATUS.noInterface.code);
    expect(new UnreachableError('x').exitCode).toBe(EXIT_STATUS.unreachable.code);
  });
});

describe('bin/nccl-run follows it', () => {
  it('names the status of every exit it makes, and that status has the code written', () => {
    // Lines that run `exit N` (a comment's "exit 9 when ..." is Node's, quoted).
    const exits = [...shell.matchAll(/^[^#\n]*\bexit (\d+)\b([^\n]*)$/gm)];
    expect(exits.length).toBe(5);
    for (const [line, code, rest] of exits) {
      const name = /# (\w+)/.exec(rest as string)?.[1];
      expect(name, `${line}: say which status of src/exit-status.ts it is`).toBeDefined();
      expect(EXIT_STATUS[name as ExitName]?.code, line).toBe(Number(code));
    }
  });

  it('ends by 128 + N on each signal it traps before the exec', () => {
    const traps = [...shell.matchAll(/trap '_nccl_run_stop (\w+) (\d+)' \1/g)];
    expect(traps.map((trap) => trap[1])).toEqual(['HUP', 'INT', 'QUIT', 'TERM']);
    for (const [, name, status] of traps) {
      const signal = constants.signals[`SIG${name}` as keyof typeof constants.signals];
      expect(Number(status)).toBe(signalStatus(signal));
    }
  });
});

describe('the README and --help follow it', () => {
  it("the README's table is the table, row for row", () => {
    const section = readme.slice(readme.indexOf('## Exit status'));
    const rows = [
      ...section
        .slice(0, section.indexOf('\n\n', section.indexOf('|---|')))
        .matchAll(/^\| (.+?) \| (.+) \|$/gm),
    ]
      .map(([, code, meaning]) => ({ code, meaning }))
      .filter((row) => row.code !== 'status' && row.code !== '---');
    expect(rows).toEqual([
      ...PASSED_THROUGH.map(({ code, meaning }) => ({ code: code.replace('’', "'"), meaning })),
      ...Object.values(EXIT_STATUS)
        .filter((entry) => entry.code !== 0)
        .map((entry) => ({ code: String(entry.code), meaning: entry.meaning })),
    ]);
  });

  it("--help's epilogue ends with the summary, every code in it", () => {
    expect(EPILOGUE.endsWith(exitStatusSummary())).toBe(true);
    for (const entry of Object.values(EXIT_STATUS)) {
      if (entry.code !== 0)
        expect(exitStatusSummary().replaceAll('\n', ' ')).toContain(`${entry.code} ${entry.brief}`);
    }
    for (const line of exitStatusSummary().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});
