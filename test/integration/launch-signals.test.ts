/**
 * SPEC "Launch": after the exec every signal reaches torchrun exactly once,
 * as if it had been started alone, in each context users have; before the
 * exec a signal stops nccl-run at once and nothing is launched. Each context
 * is its own test, through each real entry (bin/nccl-run and the single
 * executable, fixtures/nccl-run-process.ts ENTRIES), real processes, a real
 * pseudo-terminal, real timeout(1) and real tini as PID 1. Slurm's scancel is
 * in test/e2e/slurm.test.ts, on a real cluster.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fixture,
  isReady,
  readReport,
  removeReports,
  reportPath,
  waitForReport,
} from '../fixtures/fixture-report.js';
import {
  assertBuilt,
  cliCommand,
  ENTRIES,
  settleAndRelease,
  startDetached,
  startOnTerminal,
} from '../fixtures/nccl-run-process.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

afterAll(removeReports);

const EXIT_CODE = 7;
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'] as const;

/** The holding fixture: records every signal and exits EXIT_CODE on SIGALRM. */
function holdEnv(report: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FIXTURE_REPORT: report,
    FIXTURE_HOLD: '1',
    FIXTURE_EXIT_CODE: String(EXIT_CODE),
  };
}

/** Starts nccl-run detached and waits until the launcher runs in its place. */
async function startedDetached(report: string, bin: string): Promise<ChildProcess> {
  const nccl = startDetached(cliCommand('report-launcher.js', [], bin), holdEnv(report));
  const ready = await waitForReport(report, isReady, { writer: nccl });
  expect(ready.pid).toBe(nccl.pid);
  return nccl;
}

/** Whether a pid runs: a zombie waiting for its new parent to reap it has stopped. */
function isRunning(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

describe.each(ENTRIES)('through $name', (entry) => {
  const { bin } = entry;
  beforeAll(() => assertBuilt(entry));

  describe('after the exec, without a terminal', () => {
    // kill(1) of the pid, and a signal to the whole process group (nccl-run leads its own).
    it.each([
      ...SIGNALS.map((signal) => ['kill(1) of the pid', signal, 1] as const),
      ...(['SIGTERM', 'SIGINT', 'SIGHUP'] as const).map(
        (signal) => ['a signal to the whole process group', signal, -1] as const,
      ),
    ])('%s: %s arrives exactly once', async (_case, signal, sign) => {
      const report = reportPath();
      const nccl = await startedDetached(report, bin);
      const pid = nccl.pid as number;
      process.kill(sign * pid, signal);
      const { status, marker, final } = await settleAndRelease(nccl, pid, report, signal);
      expect(final.signals).toEqual([signal, marker]);
      expect(status).toBe(EXIT_CODE);
    });

    // Long enough for nccl-run to have exec'd the launcher on a loaded machine (it takes
    // about 0.2 s alone): a SIGTERM before the exec ends nccl-run, which other tests cover.
    const TIMEOUT_S = '2';
    // coreutils timeout's cleanup() (src/timeout.c) kills the command's pid and then, unless
    // --foreground, its whole process group: torchrun started alone under it gets one SIGTERM,
    // or two when it handled the first before the group's arrived (the kernel merges a pending
    // one). After the exec nccl-run adds none: no other signal, never a third.
    it.each([
      ['timeout(1)', [], [1, 2]],
      ['timeout --foreground', ['--foreground'], [1]],
    ] as const)('%s: only its SIGTERMs arrive, and it says 124', async (_name, flags, counts) => {
      const report = reportPath();
      const timeout = spawn(
        'timeout',
        [...flags, '-s', 'TERM', TIMEOUT_S, ...cliCommand('report-launcher.js', [], bin)],
        {
          env: holdEnv(report),
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      const ready = await waitForReport(report, isReady, { writer: timeout });
      const { status, marker, final } = await settleAndRelease(
        timeout,
        ready.pid,
        report,
        'SIGTERM',
      );
      expect(final.signals.filter((s) => s !== 'SIGTERM')).toEqual([marker]);
      expect(counts).toContain(final.signals.filter((s) => s === 'SIGTERM').length);
      expect(status).toBe(124);
    });

    it('SIGTERM to tini as PID 1 (docker stop, the kubelet) arrives exactly once', async () => {
      const report = reportPath();
      // A PID namespace of its own makes tini PID 1, as in a container.
      const container = spawn(
        'unshare',
        ['--pid', '--fork', 'tini', '--', ...cliCommand('report-launcher.js', [], bin)],
        { env: holdEnv(report), stdio: ['ignore', 'ignore', 'inherit'] },
      );
      const ready = await waitForReport(report, isReady, { writer: container });
      expect(ready.ppid).toBe(1); // the launcher is tini's child, with nothing in between
      const tini = Number(
        readFileSync(`/proc/${container.pid}/task/${container.pid}/children`, 'utf8').trim(),
      );
      process.kill(tini, 'SIGTERM');
      // tini forwards every signal to its child: the marker and the release go the same way.
      const { status, marker, final } = await settleAndRelease(
        container,
        tini,
        report,
        'SIGTERM',
        tini,
      );
      expect(final.signals).toEqual(['SIGTERM', marker]);
      expect(status).toBe(EXIT_CODE);
    });
  });

  describe('after the exec, on a terminal (pseudo-terminal from script(1))', () => {
    it.each([
      ['Ctrl-C', '\x03', 'SIGINT'],
      ['Ctrl-\\', '\x1c', 'SIGQUIT'],
    ])('%s arrives exactly once', async (_key, keystroke, signal) => {
      const report = reportPath();
      const terminal = startOnTerminal(cliCommand('report-launcher.js', [], bin), holdEnv(report));
      const ready = await waitForReport(report, isReady, { writer: terminal });
      terminal.stdin?.write(keystroke);
      const { status, marker, final } = await settleAndRelease(terminal, ready.pid, report, signal);
      expect(final.signals).toEqual([signal, marker]);
      expect(status).toBe(EXIT_CODE);
    });

    it('a signal to the foreground process group arrives exactly once', async () => {
      const report = reportPath();
      const terminal = startOnTerminal(cliCommand('report-launcher.js', [], bin), holdEnv(report));
      const ready = await waitForReport(report, isReady, { writer: terminal });
      process.kill(-ready.pid, 'SIGTERM');
      const { status, marker, final } = await settleAndRelease(
        terminal,
        ready.pid,
        report,
        'SIGTERM',
      );
      expect(final.signals).toEqual(['SIGTERM', marker]);
      expect(status).toBe(EXIT_CODE);
    });

    it('a hang-up (SSH drop): SIGHUP arrives once and the parent gets the launcher status', async () => {
      const report = reportPath();
      // A Python launcher, as torchrun is: Node itself aborts at exit after a hang-up.
      const sshd = execa(
        '/usr/bin/python3',
        [fixture('pty-hangup.py'), report, ...cliCommand('report-launcher.py', [], bin)],
        { env: holdEnv(report), reject: false },
      );
      const hungUp = await waitForReport(report, (r) => r.signals.includes('SIGHUP'));
      const marker = 'SIGUSR2';
      process.kill(hungUp.pid, marker);
      await waitForReport(report, (r) => r.signals.includes(marker));
      process.kill(hungUp.pid, 'SIGALRM');
      const ended = JSON.parse((await sshd).stdout) as { pid: number; exitCode: number | null };
      expect(ended).toEqual({ pid: hungUp.pid, exitCode: EXIT_CODE, signal: null });
      expect(readReport(report)?.signals).toEqual(['SIGHUP', marker]);
    });
  });

  tier('before the exec', netnsUnavailable, () => {
    const lab = new Lab(`sig${ENTRIES.indexOf(entry)}`);
    afterAll(() => lab.cleanup());

    /**
     * nccl-run on a host of its own (`prefix` before it: a PID namespace, say)
     * whose master, on the host's own subnet, is nowhere: the pre-flight
     * retries until killed. Resolves once it says it waits.
     */
    async function waitingCheck(host: string, subnet: string, prefix: string[] = []) {
      await lab.host(host);
      await lab.link(host, 'eth0', host, 'eth1');
      await lab.addr(host, 'eth0', `${subnet}.1/24`);
      const report = reportPath();
      const child = spawn(
        'ip',
        [
          ...['netns', 'exec', lab.ns(host), ...prefix, bin, '--verify', 'master'],
          ...['--verify-timeout', '60s', '--torchrun', fixture('report-launcher.js')],
          ...['--nnodes=2', '--node-rank=1', `--master-addr=${subnet}.2`, '--master-port=29500'],
          'train.py',
        ],
        { env: { ...process.env, FIXTURE_REPORT: report }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const said = { stderr: '' };
      child.stderr?.on('data', (chunk) => {
        said.stderr += String(chunk);
      });
      const deadline = Date.now() + 15_000;
      while (!said.stderr.includes('waiting for') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(said.stderr).toContain(`waiting for ${subnet}.2:29500`);
      const ended = new Promise<[number | null, string | null]>((resolve) =>
        child.once('exit', (code, sig) => resolve([code, sig])),
      );
      return { child, report, said, ended };
    }

    it('a SIGTERM while the pre-flight waits for the master ends nccl-run at once, and nothing starts', async () => {
      const { child: nccl, report, said, ended } = await waitingCheck('w', '198.18.77');
      // `ip netns exec` execs nccl-run's shell, whose one child is its Node half; the single executable has none.
      const children = readFileSync(`/proc/${nccl.pid}/task/${nccl.pid}/children`, 'utf8').trim();
      expect(children === '').toBe(entry.nodeStarts);
      const node = Number(children || nccl.pid);
      const sent = Date.now();
      process.kill(nccl.pid as number, 'SIGTERM');
      const [, signal] = await ended;
      expect(signal).toBe('SIGTERM'); // a shell reports it as 143
      // At once: the pre-flight, which would have waited out its 60 s, never got to its verdict.
      expect(said.stderr).not.toContain('verification failed');
      // The Node half sees its shell go and stops too, releasing what it held.
      while (isRunning(node) && Date.now() - sent < 5_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(isRunning(node)).toBe(false);
      expect(readReport(report)).toBeUndefined();
    });

    it('as PID 1 of a container without an init, a SIGTERM while the pre-flight waits ends nccl-run with 143, and nothing starts', async () => {
      // The kernel drops a signal PID 1 leaves at its default: nccl-run must handle it (the single
      // executable ignored it before: found in the Kubernetes tier's pre-flight init container).
      const {
        child: container,
        report,
        said,
        ended,
      } = await waitingCheck('p1', '198.18.78', ['unshare', '--pid', '--fork', '--mount-proc']);
      // unshare's one child is the namespace's PID 1: nccl-run's shell, or the single executable.
      const pidOne = Number(
        readFileSync(`/proc/${container.pid}/task/${container.pid}/children`, 'utf8').trim(),
      );
      expect(readFileSync(`/proc/${pidOne}/status`, 'utf8')).toMatch(/^NSpid:\s+\d+\s+1$/m);
      process.kill(pidOne, 'SIGTERM');
      const [code, signal] = await ended;
      // unshare --fork passes on its child's end: a death by the signal, or 143 from a handler.
      expect([code === 143, signal === 'SIGTERM']).toContain(true);
      expect(said.stderr).not.toContain('verification failed');
      expect(readReport(report)).toBeUndefined();
    });

    it('as PID 1, the launcher it execs ignores no signal: the handlers nccl-run took end at the exec', async () => {
      const report = reportPath();
      await execa(
        'unshare',
        [
          ...['--pid', '--fork', '--mount-proc', bin, '--verify', 'none', '--iface', 'lo'],
          ...['--torchrun', fixture('signal-dispositions.sh'), 'train.py'],
        ],
        { env: { ...process.env, FIXTURE_REPORT: report } },
      );
      expect(readFileSync(report, 'utf8').trim()).toBe('SigIgn:\t0000000000000000');
    });
  });
});
