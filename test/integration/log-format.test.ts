/**
 * SPEC "Options" `--log-format text|json`: logs go to stderr only; `text`,
 * the default, is one plain line per event, as a Slurm `.out` file, `kubectl
 * logs` and `docker logs` are read by people, coloured only on a terminal;
 * `json` is one object per line, for collectors, by the flag or
 * NCCL_RUN_LOG_FORMAT. Through each entry users run (bin/nccl-run and the
 * single executable), with stderr a real file and a pseudo-terminal.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, ENTRIES, shellWord } from '../fixtures/nccl-run-process.js';

const dir = mkdtempSync(join(tmpdir(), 'nccl-run-log-format-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A one-node dry run on loopback: it logs its launch summary and launches nothing. */
const DRY_RUN = ['--dry-run', '--verify', 'none', '--standalone', 'train.py'];
/** PATH and HOME only, as a batch job's environment: nothing here asks for a format. */
const ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
/** pino-pretty's line: time, level, the logger's name, the message (log.ts). */
const TEXT_LINE = /^\[\d\d:\d\d:\d\d\] (DEBUG|INFO|WARN|ERROR) \(nccl-run\): \S/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's colour escape is the point
const COLOUR = /\u001b\[\d+m/;

/** stderr written to a real file, as sbatch's --output or a redirect makes it. */
async function stderrToFile(bin: string, args: string[], env: Record<string, string> = {}) {
  const file = join(dir, `stderr-${Math.random().toString(36).slice(2)}`);
  const result = await execa(bin, args, {
    env: { ...ENV, ...env },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: { file },
  });
  return { exitCode: result.exitCode, stderr: readFileSync(file, 'utf8') };
}

describe.each(ENTRIES)('through $name', (entry) => {
  it('logs plain text lines by default, one per event, into a file', async () => {
    assertBuilt(entry);
    const { exitCode, stderr } = await stderrToFile(entry.bin, DRY_RUN);
    expect(exitCode, stderr).toBe(0);
    const lines = stderr.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(TEXT_LINE);
    expect(lines).toContainEqual(
      expect.stringMatching(/ INFO \(nccl-run\): using lo 127\.0\.0\.1 /),
    );
    expect(stderr).not.toMatch(COLOUR);
    expect(stderr).not.toContain('"msg"');
  });

  it('logs JSON objects when asked, by the flag or NCCL_RUN_LOG_FORMAT', async () => {
    assertBuilt(entry);
    for (const [args, env] of [
      [['--log-format', 'json', ...DRY_RUN], {}],
      [DRY_RUN, { NCCL_RUN_LOG_FORMAT: 'json' }],
    ] as const) {
      const { exitCode, stderr } = await stderrToFile(entry.bin, [...args], env);
      expect(exitCode, stderr).toBe(0);
      const records = stderr
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: number; name: string; msg: string });
      expect(records).toContainEqual(
        expect.objectContaining({
          level: 30,
          name: 'nccl-run',
          msg: expect.stringMatching(/^using lo 127\.0\.0\.1 /),
        }),
      );
    }
  });

  it('colours the level on a terminal, and not under NO_COLOR', async () => {
    assertBuilt(entry);
    const line = (prefix: string) =>
      `${prefix}exec ${[entry.bin, ...DRY_RUN].map(shellWord).join(' ')} >/dev/null`;
    const onTerminal = await execa('script', ['-qfec', line(''), '/dev/null'], {
      env: ENV,
      extendEnv: false,
      reject: false,
    });
    expect(onTerminal.exitCode, onTerminal.stdout).toBe(0);
    expect(onTerminal.stdout).toMatch(COLOUR);
    expect(onTerminal.stdout).toMatch(/using lo 127\.0\.0\.1/);
    const noColour = await execa('script', ['-qfec', line('NO_COLOR=1 '), '/dev/null'], {
      env: ENV,
      extendEnv: false,
      reject: false,
    });
    expect(noColour.exitCode, noColour.stdout).toBe(0);
    expect(noColour.stdout).toMatch(/INFO \(nccl-run\): using lo 127\.0\.0\.1/);
    expect(noColour.stdout).not.toMatch(COLOUR);
  });

  it('a refusal is one ERROR line, its details as plain lines under it', async () => {
    assertBuilt(entry);
    const { exitCode, stderr } = await stderrToFile(entry.bin, ['--iface', 'nope0', ...DRY_RUN]);
    expect(exitCode).toBe(69);
    const [first, ...details] = stderr.trimEnd().split('\n');
    expect(first).toMatch(/^\[\d\d:\d\d:\d\d\] ERROR \(nccl-run\): --iface nope0 /);
    expect(details.length).toBeGreaterThan(0);
    for (const line of details) expect(line).toMatch(/^ {2}/);
  });
});

it('refuses a format it does not have with 64, naming the valid ones', async () => {
  const { exitCode, stderr } = await stderrToFile(ENTRIES[0]?.bin as string, [
    '--log-format',
    'pretty',
    ...DRY_RUN,
  ]);
  expect(exitCode).toBe(64);
  expect(stderr.trim().split('\n')).toEqual([
    expect.stringMatching(/--log-format.*pretty.*text.*json/),
  ]);
});
