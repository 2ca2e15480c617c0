/**
 * SPEC "Launch" through each real entry (bin/nccl-run after `npm run build`,
 * the single executable after `npm run release`): torchrun *replaces* nccl-run. The fixture launcher reports its
 * pid and parent, and the kernel's own bytes of its argv and environment
 * (/proc/self/cmdline, /proc/self/environ), so these tests see what the
 * exec really delivered, not what Node decoded. Signals are in
 * launch-signals.test.ts.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, readReport, removeReports, reportPath } from '../fixtures/fixture-report.js';
import { assertBuilt, cliCommand, ENTRIES, shellWord } from '../fixtures/nccl-run-process.js';

afterAll(removeReports);

/** Runs nccl-run to the end under `sh -c`, so argv and environment can hold any bytes. */
async function ncclRun(
  bin: string,
  launcher: string,
  script: string,
  env: Record<string, string> = {},
): Promise<{ status: number | undefined; stderr: string; report: string }> {
  const report = reportPath();
  const command = cliCommand(launcher, [], bin).map(shellWord).join(' ');
  const line = script
    .replace('NCCL_RUN', command)
    .replace('LAUNCHER', shellWord(fixture(launcher)));
  const result = await execa('sh', ['-c', line], {
    env: { PATH: process.env.PATH as string, FIXTURE_REPORT: report, ...env },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  return { status: result.exitCode, stderr: result.stderr, report };
}

/** The message of nccl-run's one error line (text logs, the default). */
function errorMessage(stderr: string): string {
  const last = stderr.trim().split('\n').at(-1) ?? '';
  return last.match(/ ERROR \(nccl-run\): (.*)$/)?.[1] ?? `(no error line in: ${stderr})`;
}

/** NUL-separated kernel strings (cmdline, environ) as byte buffers. */
function nulSplit(base64: string): Buffer[] {
  const bytes = Buffer.from(base64, 'base64');
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i += 1) {
    if (bytes[i] === 0) {
      parts.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  return parts;
}

/** The launcher's argv after its script path, as bytes. */
function launcherArgv(cmdline: string, script: string): Buffer[] {
  const parts = nulSplit(cmdline);
  const at = parts.findIndex((part) => part.toString() === script);
  return parts.slice(at + 1);
}

describe.each(ENTRIES)('through $name', (entry) => {
  const { bin } = entry;
  beforeAll(() => assertBuilt(entry));

  describe('launch: torchrun replaces nccl-run (exec)', () => {
    it('runs the launcher as the very process that was started, with no process in between', async () => {
      const report = reportPath();
      const [file, ...args] = cliCommand('report-launcher.js', [], bin) as [string, ...string[]];
      const nccl = spawn(file, args, {
        env: { ...process.env, FIXTURE_REPORT: report },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const [code] = await once(nccl, 'exit');
      expect(code).toBe(0);
      const seen = readReport(report);
      expect(seen?.pid).toBe(nccl.pid);
      expect(seen?.ppid).toBe(process.pid);
    });

    it('passes torchrun arguments byte for byte: quotes, $, ;, empty, non-ASCII, bytes that are not UTF-8', async () => {
      const plain = [
        '--nnodes=1',
        'train.py',
        'two words',
        '"double"',
        "'single'",
        '$(touch /tmp/nccl-run-launch-shell-ran)',
        'a;b && c | d',
        '',
        'naïve 日本語 ✓',
        '--iface',
        'eth9',
        '--',
        '--dry-run',
        '*',
        'new\nline',
      ];
      // Bytes 0xff 0xfe and a lone continuation byte: no UTF-8 decoder keeps them.
      const { status, report } = await ncclRun(
        bin,
        'report-launcher.js',
        `exec NCCL_RUN ${plain.map(shellWord).join(' ')} "$(printf 'x\\377\\376y\\200')"`,
      );
      expect(status).toBe(0);
      const argv = launcherArgv(readReport(report)?.cmdline ?? '', fixture('report-launcher.js'));
      expect(argv).toEqual([
        ...plain.map((word) => Buffer.from(word)),
        Buffer.from([0x78, 0xff, 0xfe, 0x79, 0x80]),
      ]);
      expect(existsSync('/tmp/nccl-run-launch-shell-ran')).toBe(false);
    });

    it('keeps the environment byte for byte and adds only the variables nccl-run sets', async () => {
      // What the same shell line hands the launcher without nccl-run is the baseline.
      const assignments = `RAW="$(printf 'caf\\351')" SPACED='a  b' EMPTY=`;
      const alone = await ncclRun(
        bin,
        'report-launcher.js',
        `${assignments} exec LAUNCHER train.py`,
      );
      const through = await ncclRun(
        bin,
        'report-launcher.js',
        `${assignments} exec NCCL_RUN train.py`,
      );
      expect(through.status).toBe(0);
      const entries = (report: string) =>
        nulSplit(readReport(report)?.environ ?? '').filter(
          (entry) => !entry.toString().startsWith('FIXTURE_REPORT='),
        );
      const baseline = entries(alone.report);
      expect(baseline).toContainEqual(Buffer.from([...Buffer.from('RAW=caf'), 0xe9]));
      const added = entries(through.report).filter(
        (entry) => !baseline.some((kept) => kept.equals(entry)),
      );
      expect(added.map(String).sort()).toEqual([
        'GLOO_SOCKET_IFNAME=lo',
        'NCCL_SOCKET_FAMILY=AF_INET',
        'NCCL_SOCKET_IFNAME==lo',
        'PET_LOCAL_ADDR=127.0.0.1',
        'TP_SOCKET_IFNAME=lo',
      ]);
      expect(entries(through.report).length).toBe(baseline.length + added.length);
    });

    it('leaves the launcher the descriptors its caller passed, and none of its own', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ncr-fds-'));
      const passed = join(dir, 'passed');
      const fd = openSync(passed, 'w');
      const report = join(dir, 'fds');
      try {
        const listFds = async (command: string[]) => {
          const [file, ...args] = command as [string, ...string[]];
          const child = spawn(file, args, {
            env: { ...process.env, FIXTURE_REPORT: report },
            // 3, and 20: above the 0 to 15 that Node marks close-on-exec (Entry.nodeStarts).
            stdio: ['ignore', 'ignore', 'ignore', fd, ...Array(16).fill('ignore'), fd],
          });
          await once(child, 'exit');
          // The shell's own (the script it reads, a command substitution's pipe) differ by inode only.
          return readFileSync(report, 'utf8')
            .trim()
            .split('\n')
            .map((line) => line.replace(/:\[\d+\]$/, ''));
        };
        const alone = await listFds([fixture('list-fds.sh')]);
        expect(alone).toEqual(expect.arrayContaining([`3 ${passed}`, `20 ${passed}`]));
        const through = await listFds(cliCommand('list-fds.sh', [], bin));
        if (!entry.nodeStarts) {
          expect(through).toEqual(alone);
          return;
        }
        // Node closes 3 to 15 at the exec (Entry.nodeStarts; the README says so), so the
        // shell's own pipe takes the lowest free descriptor, 3 instead of 4.
        const notShells = (fds: string[]) => fds.filter((fd) => !/^\d pipe$/.test(fd));
        expect(notShells(through)).toEqual(notShells(alone).filter((fd) => fd !== `3 ${passed}`));
        expect(through).toContain(`20 ${passed}`);
      } finally {
        closeSync(fd);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('launch: signal dispositions', () => {
    it('the launcher ignores the signals its caller ignored, and only those: not the SIGPIPE and SIGXFSZ Node ignores', async () => {
      const mask = async (line: string) => {
        const { status, report } = await ncclRun(bin, 'signal-dispositions.sh', line);
        expect(status).toBe(0);
        return readFileSync(report, 'utf8').trim();
      };
      expect(await mask('exec LAUNCHER train.py')).toBe('SigIgn:\t0000000000000000');
      expect(await mask('exec NCCL_RUN train.py')).toBe('SigIgn:\t0000000000000000');
      // A caller's ignored SIGHUP (nohup): Node resets it at its start, before any of nccl-run runs.
      expect(await mask("trap '' HUP; exec NCCL_RUN train.py")).toBe(
        entry.nodeStarts ? 'SigIgn:\t0000000000000000' : 'SigIgn:\t0000000000000001',
      );
    });
  });

  describe("launch: torchrun's own help", () => {
    it('-h after other options resolves and verifies nothing: torchrun prints its help', async () => {
      // Without the short cut, the missing interface would be exit 69.
      const report = reportPath();
      const result = await execa(
        bin,
        [
          ...[
            '--iface',
            'nosuch0',
            '--verify',
            'master',
            '--torchrun',
            fixture('report-launcher.js'),
          ],
          ...['--nnodes=2', '--node-rank=1', '--master-addr=198.18.0.1', '-h'],
        ],
        { env: { ...process.env, FIXTURE_REPORT: report }, reject: false, stdin: 'ignore' },
      );
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toBe('');
      expect(readReport(report)?.argv).toEqual([
        '--nnodes=2',
        '--node-rank=1',
        '--master-addr=198.18.0.1',
        '-h',
      ]);
      expect(readReport(report)?.env.NCCL_SOCKET_IFNAME).toBeUndefined();
    });
  });

  describe('launch: exit status (SPEC "Exit status")', () => {
    it.each([0, 1, 2, 42, 255])('is the launcher exit code %i', async (code) => {
      const { status } = await ncclRun(bin, 'report-launcher.js', 'exec NCCL_RUN train.py', {
        FIXTURE_EXIT_CODE: String(code),
      });
      expect(status).toBe(code);
    });

    it.each([
      ['SIGKILL', 137],
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ])('is a death by %s, which a shell reports as %i', async (signal, shellStatus) => {
      const env = { ...process.env, FIXTURE_SIGNAL: signal };
      const [file, ...args] = cliCommand('self-signal.js', [], bin) as [string, ...string[]];
      const direct = await execa(file, args, { env, reject: false, stdin: 'ignore' });
      expect(direct.signal).toBe(signal);
      const { status } = await ncclRun(bin, 'self-signal.js', 'NCCL_RUN; exit $?', {
        FIXTURE_SIGNAL: signal,
      });
      expect(status).toBe(shellStatus);
    });

    it('is 127 naming a launcher that does not exist, before anything runs', async () => {
      const missing = join(dirname(fixture('x')), 'no-such-torchrun');
      const { status, stderr, report } = await ncclRun(
        bin,
        'no-such-torchrun',
        'exec NCCL_RUN train.py',
      );
      expect(status).toBe(127);
      expect(errorMessage(stderr)).toContain(`"${missing}" not found`);
      expect(readReport(report)).toBeUndefined();
    });

    it('is 126 for a launcher that is not executable', async () => {
      const { status, stderr } = await ncclRun(bin, 'not-executable.js', 'exec NCCL_RUN train.py');
      expect(status).toBe(126);
      expect(errorMessage(stderr)).toContain(fixture('not-executable.js'));
    });

    it('runs a launcher with no #! line as a shell script, as exec does: same pid, its arguments', async () => {
      const report = reportPath();
      const [file, ...args] = cliCommand('no-shebang-launcher', ['train.py', 'a b'], bin) as [
        string,
        ...string[],
      ];
      const nccl = spawn(file, args, {
        env: { ...process.env, FIXTURE_REPORT: report },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const [code] = await once(nccl, 'exit');
      expect(code).toBe(0);
      expect(readFileSync(report, 'utf8')).toBe(`${nccl.pid}\ntrain.py\na b\n`);
    });

    it('is 126 naming the missing #! interpreter of a moved virtualenv', async () => {
      const { status, stderr } = await ncclRun(
        bin,
        'moved-venv-launcher',
        'exec NCCL_RUN train.py',
      );
      expect(status).toBe(126);
      expect(errorMessage(stderr)).toContain('"/nonexistent/venv/bin/python3"');
    });

    it('is 127 naming the PATH searched for a bare launcher name', async () => {
      const result = await execa(
        bin,
        ['--iface', 'lo', '--verify', 'none', '--torchrun', 'nccl-run-no-such-launcher', 'x'],
        {
          env: { PATH: `/nonexistent-a:${dirname(process.execPath)}:/usr/bin:/bin` },
          extendEnv: false,
          reject: false,
        },
      );
      expect(result.exitCode).toBe(127);
      expect(errorMessage(result.stderr)).toContain(
        '"nccl-run-no-such-launcher" not found (not on PATH=/nonexistent-a:',
      );
    });
  });
});
