/**
 * The hand-over (bin/nccl-run and src/launch/hand-over.ts) under each POSIX
 * shell users have as /bin/sh: dash (Debian, Ubuntu), bash (RHEL and most
 * HPC clusters), busybox sh (minimal images); and the single executable's
 * (src/launch/exec-launcher.ts), held to the same tests. Real shells, real
 * signals, real descriptors; the launchers are real programs (env(1), the
 * fixture scripts) that report what they received. Signals after the exec
 * are in launch-signals.test.ts, the rest of the launch in launch.test.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBytes } from '../../src/byte-string.js';
import { rebuildScript } from '../../src/launch/exec-launcher.js';
import { handoverScript } from '../../src/launch/hand-over.js';
import { fixture } from '../fixtures/fixture-report.js';
import { BIN, SINGLE_EXECUTABLE, shellWord } from '../fixtures/nccl-run-process.js';
import { netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const SHELLS: [string, string[]][] = [
  ['dash', ['dash']],
  ['bash', ['bash']],
  ['busybox sh', ['busybox', 'sh']],
];

/** Each way nccl-run starts: the shell entry under each shell, and the single executable (Entry.nodeStarts). */
const STARTS: [string, { command: string[]; nodeStarts: boolean; quitIs131: boolean }][] = [
  ...SHELLS.map(([name, shell]): (typeof STARTS)[number] => [
    `the shell entry under ${name}`,
    // bash and busybox sh ignore SIGQUIT even untrapped: they exit 131 instead.
    { command: [...shell, BIN], nodeStarts: false, quitIs131: name !== 'dash' },
  ]),
  ['the single executable', { command: [SINGLE_EXECUTABLE], nodeStarts: true, quitIs131: false }],
];

/** `[file, args]` to run `args` under `shell`. */
function under(shell: string[], args: string[]): [string, string[]] {
  return [shell[0] as string, [...shell.slice(1), ...args]];
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ncr-handover-'));
  dirs.push(dir);
  return dir;
}

/** A loopback port nobody listens on: the master the pre-flight waits for. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A worker's nccl-run that waits for its master until killed (or 60 s). */
function waitingWorker(start: string[], port: number): [string, string[]] {
  const [file, ...args] = [
    ...start,
    ...['--iface', 'lo', '--verify', 'master', '--verify-timeout', '60s'],
    ...['--log-format', 'json', '--torchrun', fixture('report-launcher.js')],
    ...['--nnodes=2', '--node-rank=1', '--master-addr=127.0.0.1', `--master-port=${port}`, 'x.py'],
  ] as [string, ...string[]];
  return [file, args];
}

/** The pids of the processes whose environment holds `marker`: what one run left behind. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(marker)) found.push(Number(entry));
    } catch {}
  }
  return found;
}

/** Waits (bounded) until no process of the run is left; returns those still there. */
async function leftBehind(marker: string, withinMs = 3_000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const left = processesWith(marker);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The report file's text once the fixture has written it (bounded). */
async function waitForReportFile(path: string, withinMs = 20_000): Promise<string> {
  const deadline = Date.now() + withinMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`no ${path} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return readFileSync(path, 'utf8');
}

/** Resolves once PID runs sleep(1) and sits in its nanosleep: the process has no transient descriptors left. */
async function asleep(pid: number, withinMs = 20_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  const read = (file: string) => readFileSync(`/proc/${pid}/${file}`, 'utf8').trim();
  while (!(read('comm') === 'sleep' && read('wchan').includes('nanosleep'))) {
    if (Date.now() > deadline)
      throw new Error(`pid ${pid} not asleep in sleep(1) after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Reads the stream until `text` appears (bounded): an observable state, not a sleep. */
function waitForText(child: ChildProcess, text: string, withinMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no '${text}' in: ${seen}`)), withinMs);
    child.stderr?.on('data', (chunk) => {
      seen += String(chunk);
      if (seen.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

describe.each(STARTS)('the hand-over through %s', (_name, start) => {
  it('gives the launcher the caller environment byte for byte, and exactly what nccl-run sets', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'job.env'), Buffer.from('FROM_FILE=caf\xe9 \xff\n', 'latin1'));
    // env(1) sets what no shell can: names that are not identifiers, a missing PWD, raw bytes.
    const caller = [
      ...['env', '-i', `PATH=${process.env.PATH}`, 'SHLVL=3', 'a-b=1', 'a.b=2'],
      shellWord('BASH_FUNC_module%%=() {  eval "$(/usr/bin/modulecmd bash "$@")"\n}'),
      '"RAW=$(printf \'caf\\351\\377\')"',
      `"QUOTED=it's \\"\\$HOME\\" \\\`id\\\`"`,
    ].join(' ');
    const environ = async (command: string) => {
      const { stdout } = await execa('sh', ['-c', `cd ${dir} && exec ${caller} ${command}`], {
        encoding: 'buffer',
        extendEnv: false,
        env: { PATH: process.env.PATH },
      });
      return Buffer.from(stdout)
        .toString('latin1')
        .split('\0')
        .filter((entry) => entry !== '');
    };
    const alone = await environ('/usr/bin/env -0');
    const through = await environ(
      [
        ...start.command,
        ...['--iface', 'lo', '--verify', 'none', '--log-level', 'silent'],
        ...['--env-file', 'job.env', '--torchrun', '/usr/bin/env', '-0'],
      ]
        .map(shellWord)
        .join(' '),
    );
    expect(alone).toContain('a-b=1');
    expect(alone).toContain('BASH_FUNC_module%%=() {  eval "$(/usr/bin/modulecmd bash "$@")"\n}');
    expect(alone).toContain(Buffer.from('RAW=caf\xe9\xff', 'latin1').toString('latin1'));
    expect(through.filter((entry) => !alone.includes(entry)).sort()).toEqual([
      Buffer.from('FROM_FILE=caf\xe9 \xff', 'latin1').toString('latin1'),
      'GLOO_SOCKET_IFNAME=lo',
      'NCCL_SOCKET_FAMILY=AF_INET',
      'NCCL_SOCKET_IFNAME==lo',
      'PET_LOCAL_ADDR=127.0.0.1',
      'TP_SOCKET_IFNAME=lo',
    ]);
    expect(alone.filter((entry) => !through.includes(entry))).toEqual([]);
  });

  it('a signal in the first milliseconds, while Node starts, ends everything: no process, no file, no wait', async () => {
    const port = await closedPort();
    const signals = ['SIGTERM', 'SIGHUP', 'SIGKILL', 'SIGINT'] as const;
    // The window is a few milliseconds wide, wherever Node is in its start: many delays.
    for (let run = 0; run < 24; run += 1) {
      const signal = signals[run % signals.length] as (typeof signals)[number];
      const delayMs = run * 6;
      const marker = `NCR_HANDOVER_RUN=${process.pid}-${run}-${Math.random()}`;
      const temp = freshDir();
      const child = spawn(...waitingWorker(start.command, port), {
        env: { ...process.env, NCR_HANDOVER_RUN: marker.split('=')[1], TMPDIR: temp },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // The caller's pipes close only when every process holding them has gone.
      const streamsClosed = Promise.all([once(child.stdout, 'close'), once(child.stderr, 'close')]);
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += String(chunk);
      });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      child.kill(signal);
      const status = await exited(child);
      await streamsClosed;
      const label = `${signal} after ${delayMs} ms`;
      expect(status, label).toEqual({ code: null, signal });
      // No wait: the pre-flight, which would wait out its 60 s, never got to its verdict.
      expect(stderr, label).not.toContain('verification failed');
      expect(await leftBehind(marker), label).toEqual([]);
      // A SIGKILL between mktemp and Node's start (a millisecond) can leave the empty
      // file: no shell can act on SIGKILL, and Node, which would remove it, never ran.
      const files = readdirSync(temp).map((name) => readFileSync(join(temp, name)).length);
      expect(files, label).toEqual(signal === 'SIGKILL' ? files.map(() => 0) : []);
    }
  });

  it('SIGINT or SIGQUIT to its pid alone ends the pre-flight at once, and nothing starts', async () => {
    const port = await closedPort();
    for (const signal of ['SIGINT', 'SIGQUIT'] as const) {
      const marker = `${process.pid}-${signal}-${Math.random()}`;
      const report = join(freshDir(), 'report.json');
      const child = spawn(...waitingWorker(start.command, port), {
        env: { ...process.env, NCR_HANDOVER_RUN: marker, FIXTURE_REPORT: report },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk) => {
        stderr += String(chunk);
      });
      // The launch summary: Node is past its start, into the pre-flight that would wait 60 s.
      await waitForText(child, '"level":30');
      process.kill(child.pid as number, signal);
      const status = await exited(child);
      // At once: the pre-flight never got to its verdict.
      expect(stderr, signal).not.toContain('verification failed');
      expect(status).toEqual(
        start.quitIs131 && signal === 'SIGQUIT'
          ? { code: 131, signal: null }
          : { code: null, signal },
      );
      expect(await leftBehind(marker)).toEqual([]);
      expect(() => readFileSync(report)).toThrow();
    }
  });

  it('passes every descriptor the caller opened, 3 to 9, and launches with stdout closed', async () => {
    const dir = freshDir();
    const files = [3, 4, 5, 6, 7, 8, 9].map((fd) => `${fd} ${join(dir, `f${fd}`)}`);
    /** The launcher's descriptors 0 to 9, the caller's range, as /proc shows them. */
    const held = async (command: string[], redirections: string) => {
      const report = join(dir, `pid-${Math.random()}`);
      const opened = files.map((entry) => entry.replace(' ', '>')).join(' ');
      const line = `exec ${command.map(shellWord).join(' ')} ${opened} ${redirections}`;
      const child = spawn('sh', ['-c', line], {
        env: { ...process.env, FIXTURE_REPORT: report },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const pid = Number((await waitForReportFile(report)).trim());
      // sleep's loader and locale briefly open files at the lowest free descriptor (fd 1
      // when the caller closed it): read the table once sleep sleeps, not while it loads.
      await asleep(pid);
      const fds = readdirSync(`/proc/${pid}/fd`)
        .filter((fd) => Number(fd) < 10)
        .map((fd) => `${fd} ${readlinkSync(`/proc/${pid}/fd/${fd}`).replace(/:\[\d+\]$/, '')}`)
        .sort();
      process.kill(pid, 'SIGTERM');
      await exited(child);
      return fds;
    };
    const alone = await held([fixture('hold-fds.sh')], '');
    expect(alone).toEqual(expect.arrayContaining(files));
    const ncclRun = [
      ...start.command,
      '--iface',
      'lo',
      '--verify',
      'none',
      '--log-level',
      'silent',
    ].concat(['--torchrun', fixture('hold-fds.sh')]);
    if (!start.nodeStarts) {
      expect(await held(ncclRun, '')).toEqual(alone);
      expect(await held(ncclRun, '>&-')).toEqual(alone.filter((entry) => !entry.startsWith('1 ')));
      return;
    }
    // Node closes 3 to 15 at the exec and gives a closed 1 /dev/null (Entry.nodeStarts): the README says so.
    const unheld = alone.filter((entry) => !files.includes(entry));
    expect(await held(ncclRun, '')).toEqual(unheld);
    expect(await held(ncclRun, '>&-')).toEqual(
      unheld.map((entry) => (entry.startsWith('1 ') ? '1 /dev/null' : entry)),
    );
  });

  it('env into a closed pipe exits 141 without a stack trace', async () => {
    // stdout's reader is gone before nccl-run writes: Node starts long after spawn returns.
    const [file, ...args] = start.command as [string, ...string[]];
    const env = spawn(file, [...args, 'env', '--iface', 'lo'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    env.stdout.destroy();
    let stderr = '';
    env.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    expect(await exited(env)).toEqual({ code: 141, signal: null });
    expect(stderr).toBe('');
  });
});

describe.each(SHELLS)('sh nccl-run under %s', (_name, shell) => {
  it('runs from its own folder', async () => {
    const version = await execa(...under(shell, ['nccl-run', '--version']), {
      cwd: join(BIN, '..'),
      reject: false,
    });
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('the shell entry refuses what cannot work, each with its one line', () => {
  it('node missing from PATH is 78 naming the PATH searched, not 127 (the launcher code)', async () => {
    // A PATH with the tools a shell script uses, and no node.
    const tools = freshDir();
    for (const tool of ['mktemp', 'rm', 'readlink', 'env']) {
      symlinkSync(`/usr/bin/${tool}`, join(tools, tool));
    }
    const result = await execa('/usr/bin/dash', [BIN, '--version'], {
      env: { PATH: tools },
      extendEnv: false,
      reject: false,
    });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toBe(
      `nccl-run: node not found on PATH=${tools}; nccl-run runs on Node.js 20.12 or newer: install it or add it to PATH`,
    );
  });

  it('a node that exits 0 without handing anything over is 70, never a silent 0', async () => {
    // A stand-in for a `node` that is not Node.js (Debian's old ham-radio `node` package was one).
    const tools = freshDir();
    writeFileSync(join(tools, 'node'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const result = await execa('dash', [BIN, '--iface', 'lo', 'train.py'], {
      env: { PATH: `${tools}:/usr/bin:/bin` },
      extendEnv: false,
      reject: false,
    });
    expect(result.exitCode).toBe(70);
    expect(result.stderr).toBe(
      `nccl-run: ${join(tools, 'node')} exited 0 without handing the launch over: nccl-run runs on Node.js 20.12 or newer`,
    );
  });
});

tier('the hand-over in a mount namespace of its own (root)', netnsUnavailable, () => {
  it('no writable folder for the hand-over file is 78 naming TMPDIR', async () => {
    const result = await execa(
      'unshare',
      ['-m', 'sh', '-c', 'mount -t tmpfs -o ro none /dev/shm && exec "$@"', 'sh', 'dash', BIN],
      {
        env: { ...process.env, TMPDIR: '/nonexistent' },
        reject: false,
      },
    );
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toBe(
      'nccl-run: cannot create its hand-over file in /nonexistent or /dev/shm: set TMPDIR to a writable folder',
    );
  });
  it("without /dev/fd (a minimal container's /dev), keeps the caller's fd 9", async () => {
    const dir = freshDir();
    const report = join(dir, 'fds');
    // A /dev of the bare minimum, as some images have: null, and no fd or std* links.
    const command = [
      'mount -t tmpfs none /dev && mknod -m 666 /dev/null c 1 3',
      `exec ${[BIN, '--iface', 'lo', '--verify', 'none', '--log-level', 'silent', '--torchrun', fixture('list-fds.sh')].map(shellWord).join(' ')} 9>${join(dir, 'nine')}`,
    ].join(' && ');
    const result = await execa('unshare', ['-m', 'sh', '-c', command], {
      env: { ...process.env, FIXTURE_REPORT: report },
      reject: false,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readFileSync(report, 'utf8')).toContain(`9 ${join(dir, 'nine')}`);
  });
});

describe('the hand-over words (src/launch/hand-over.ts), evaluated by the shells', () => {
  it.each(SHELLS)(
    'under %s: values as given, launcher words before the shifted argv',
    async (_name, shell) => {
      const exports = {
        NCCL_SOCKET_IFNAME: '=ens3f0',
        TRICKY: `it's "$HOME" \`id\` ; * \\ \n end`,
        EMPTY: '',
      };
      const script = handoverScript({
        file: '/usr/bin/torchrun',
        launcher: ['python3', '-m', 'torch.distributed.run', 'a b'],
        ownTokens: 3,
        torchrunArgv: [],
        exports: { ...exports, BYTES: `caf\udce9` },
        env: {},
      });
      const file = join(freshDir(), 'handover');
      writeFileSync(file, encodeBytes(script));
      const { stdout } = await execa(
        ...under(shell, [
          '-c',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
          'file=$1; shift; . "$file"; printf "%s\\0" "$_nccl_run_next" "$@" "$NCCL_SOCKET_IFNAME" "$TRICKY" "${EMPTY-unset}" "$BYTES"',
          'sh',
          file,
          ...['--iface', 'eth0', '--dry', 'train.py', '--iface', ''],
        ]),
        { encoding: 'buffer', extendEnv: false, env: { PATH: process.env.PATH } },
      );
      const words = Buffer.from(stdout).toString('latin1').split('\0').slice(0, -1);
      expect(words).toEqual([
        'launch',
        ...['python3', '-m', 'torch.distributed.run', 'a b', 'train.py', '--iface', ''],
        exports.NCCL_SOCKET_IFNAME,
        encodeBytes(exports.TRICKY).toString('latin1'),
        '',
        'caf\xe9',
      ]);
    },
  );
});

describe("the single executable's words for bytes that are not UTF-8 (src/launch/exec-launcher.ts), evaluated by the shells", () => {
  it.each(SHELLS)(
    'under %s: every byte back, trailing newlines, quotes and % included',
    async (_name, shell) => {
      const words = [
        '/usr/bin/printf',
        '%s\\0',
        `caf\udce9 \udcff\udcfe`,
        `it's 100% "$HOME" \\n \`id\`\n\n`,
        '',
        `\udc80\n`,
        'naïve',
      ];
      const { stdout } = await execa(...under(shell, ['-c', rebuildScript(words)]), {
        encoding: 'buffer',
        extendEnv: false,
        env: {},
      });
      const printed = Buffer.from(stdout).toString('latin1').split('\0').slice(0, -1);
      expect(printed).toEqual(words.slice(2).map((word) => encodeBytes(word).toString('latin1')));
    },
  );
});
