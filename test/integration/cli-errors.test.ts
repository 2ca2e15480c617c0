/**
 * Bad input through the real CLI (SPEC "Exit status", and the rule that bad
 * input gets one clear line and starts nothing): the status, the one line,
 * and that the launcher never ran. The launcher is a fixture that would
 * leave a report file behind if it were started.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/nccl-run');
const launcher = join(root, 'test/fixtures/report-launcher.js');
const facts = (name: string) => join(root, 'test/fixtures/facts', `${name}.json`);

/** torchrun: the --torchrun flag's value, null for none (NCCL_RUN_TORCHRUN in env says it). */
async function ncclRun(
  args: string[],
  env: Record<string, string> = {},
  torchrun: string | null = launcher,
) {
  const cwd = mkdtempSync(join(tmpdir(), 'nccl-run-errors-'));
  const report = join(cwd, 'report.json');
  const flag = torchrun === null ? [] : ['--torchrun', torchrun];
  try {
    const result = await execa(bin, [...flag, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', FIXTURE_REPORT: report, ...env },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 20_000,
    });
    return {
      status: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
      launched: existsSync(report),
    };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

const rows: [string, string[], Record<string, string>, number, RegExp][] = [
  [
    'a bad flag value',
    ['--verify-timeout', '5x', 'train.py'],
    {},
    64,
    /^nccl-run: --verify-timeout: bad value '5x': expected a duration such as 500ms, 30s, 2m$/,
  ],
  [
    'a master that resolves only to a link-local address',
    [
      '--facts',
      facts('docker-host'),
      '--nnodes=2',
      '--node_rank=1',
      '--master_addr=169.254.3.4',
      'train.py',
    ],
    {},
    78,
    /the master 169\.254\.3\.4 \(--master_addr[^)]*\) resolves only to the link-local 169\.254\.3\.4, which NCCL, Gloo and torch's store cannot use without a scope/,
  ],
  [
    'a boolean flag that is not one',
    ['--force=maybe', 'train.py'],
    {},
    64,
    /^nccl-run: --force: bad value 'maybe': expected a boolean: 1, true, yes, on or 0, false, no, off \(or empty\)$/,
  ],
  [
    'a boolean variable that is not one',
    ['train.py'],
    { NCCL_RUN_DRY_RUN: 'perhaps' },
    78,
    /^nccl-run: NCCL_RUN_DRY_RUN: bad value 'perhaps': expected a boolean: 1, true, yes, on/,
  ],
  [
    'an unknown strategy',
    ['--strategy', 'fastest', 'train.py'],
    {},
    64,
    /unknown strategy 'fastest'; valid: explicit, local, multus, subnet, route, speed, agree/,
  ],
  [
    'a malformed CIDR exclude',
    ['--exclude', '172.16.0.0/33', 'train.py'],
    {},
    64,
    /^nccl-run: --exclude: bad value '172.16.0.0\/33'/,
  ],
  [
    'a typo in an NCCL_RUN_ variable',
    ['train.py'],
    { NCCL_RUN_VERIFYY: 'none' },
    78,
    /^nccl-run: NCCL_RUN_VERIFYY in the environment is not a nccl-run setting/,
  ],
  [
    'a bad NCCL_RUN_ value',
    ['train.py'],
    { NCCL_RUN_PROBE_PORT: '70000' },
    78,
    /^nccl-run: NCCL_RUN_PROBE_PORT: bad value '70000': expected a port number 1-65535$/,
  ],
  [
    'a torchrun port torchrun would reject',
    ['--nnodes=2', '--master_port=99999', 'train.py'],
    {},
    64,
    /--master_port: bad value '99999'/,
  ],
  [
    '--family that the master cannot satisfy',
    [
      '--facts',
      facts('ipv6-only'),
      '--family',
      'ipv4',
      '--nnodes=2',
      '--node_rank=1',
      '--master_addr=2001:db8:5::1',
      'train.py',
    ],
    {},
    78,
    /--family=ipv4 conflicts with the master 2001:db8:5::1, which resolves only to 2001:db8:5::1; use --family auto or ipv6/,
  ],
  [
    'an explicit interface that does not exist, even with --log-level silent',
    ['--log-level', 'silent', '--facts', facts('docker-host'), '--iface', 'nope', 'train.py'],
    {},
    69,
    /^nccl-run: --iface nope is not usable \(nope: does not exist\)\n {2}interfaces:\n {2,}NAME/,
  ],
  [
    'a Gloo interface given as an address',
    ['--facts', facts('docker-host'), '--verify', 'none', '--log-format', 'text', 'train.py'],
    { GLOO_SOCKET_IFNAME: '198.18.4.21' },
    78,
    /GLOO_SOCKET_IFNAME/,
  ],
];

rows.push(
  [
    'a typo of an nccl-run option, before the pre-flight',
    ['--ifcae', 'lo', '--nnodes=2', 'train.py'],
    {},
    64,
    /^nccl-run: unknown option '--ifcae': did you mean nccl-run's --iface\?$/,
  ],
  [
    'an nccl-run option after torchrun’s',
    ['--nproc_per_node=2', '--verify-timeout', '2s', 'train.py'],
    {},
    64,
    /^nccl-run: '--verify-timeout' is nccl-run's option, but it comes after torchrun's '--nproc_per_node=2'/,
  ],
  [
    'a boolean given a separate value',
    ['--dry-run', 'false', 'train.py'],
    {},
    64,
    /^nccl-run: --dry-run takes no separate value, so 'false' would be torchrun's first word/,
  ],
  [
    'NCCL_RUN_IFACE is named as itself, not as --iface',
    ['--facts', facts('docker-host'), '--verify', 'none', '--log-format', 'text', 'train.py'],
    { NCCL_RUN_IFACE: 'bogus' },
    69,
    /NCCL_RUN_IFACE bogus is not usable \(bogus: does not exist\)/,
  ],
  [
    'a static node rank torch cannot place (--nnodes or more), before the pre-flight',
    ['--iface', 'lo', '--nnodes=2', '--node_rank=2', '--master_addr=127.0.0.1', 'train.py'],
    {},
    64,
    /torchrun argument --node_rank: bad value '2': the nodes of a static job of 2 \(--nnodes\) are ranked 0 to 1/,
  ],
  [
    'the same rank from PET_NODE_RANK, a variable',
    ['--iface', 'lo', '--nnodes=2', '--master_addr=127.0.0.1', 'train.py'],
    { PET_NODE_RANK: '3' },
    78,
    /PET_NODE_RANK: bad value '3': the nodes of a static job of 2/,
  ],
  [
    'a launcher that is a folder',
    ['--torchrun', '/tmp', '--verify', 'none', '--iface', 'lo', 'train.py'],
    {},
    126,
    /\/tmp.{1,2} is a folder, not a program: give the launcher itself with --torchrun, e\.g\. \/tmp\/torchrun/,
  ],
);

describe('bad input through the CLI: one line, the exit status of SPEC, nothing started', () => {
  it.each(rows)('%s', async (_name, args, env, status, message) => {
    const result = await ncclRun(args, env);
    expect(result.status).toBe(status);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect(result.launched).toBe(false);
  });

  // Run through the shebang, as users do: `node --` keeps Node 20 from taking
  // --env-file for its own option (nodejs/node#54232).
  it('a missing --env-file is a usage error, a missing NCCL_RUN_ENV_FILE a configuration error', async () => {
    const missing = await ncclRun(['--env-file', '/nonexistent/x.env', 'train.py']);
    expect(missing.status).toBe(64);
    expect(missing.stderr).toMatch(
      /^nccl-run: --env-file: cannot read '\/nonexistent\/x.env' \(ENOENT\)/,
    );
    // The training script's own --env-file is the script's business, missing or not.
    const scripts = await ncclRun([
      '--verify',
      'none',
      '--iface',
      'lo',
      'train.py',
      '--env-file',
      '/nonexistent/y.env',
    ]);
    expect(scripts.status).toBe(0);
    expect(scripts.launched).toBe(true);
    expect((await ncclRun(['train.py'], { NCCL_RUN_ENV_FILE: '/nonexistent/x.env' })).status).toBe(
      78,
    );
  });

  it('a launcher that starts torchrun with a clean environment is refused: nothing nccl-run exports would reach torchrun', async () => {
    const flag = await ncclRun(
      ['--iface', 'lo', 'train.py'],
      {},
      `env -i PATH=/usr/bin ${launcher}`,
    );
    expect(flag.status).toBe(64);
    expect(flag.stderr).toMatch(
      /--torchrun: env -i starts torchrun with a clean environment, so none of the variables nccl-run exports \(NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, \.\.\.\) would reach it: drop that option, or put nccl-run inside the wrapper/,
    );
    expect(flag.launched).toBe(false);
    const fromEnv = await ncclRun(
      ['--iface', 'lo', 'train.py'],
      { NCCL_RUN_TORCHRUN: `env --ignore-environment ${launcher}` },
      null,
    );
    expect(fromEnv.status).toBe(78);
    expect(fromEnv.stderr).toMatch(/NCCL_RUN_TORCHRUN: env -i starts torchrun/);
    expect(fromEnv.stderr.trim().split('\n')).toHaveLength(1);
    expect(fromEnv.launched).toBe(false);
  });

  it.each([
    [
      'a key that is not a variable name',
      'a.b=1\n',
      /key 'a\.b' is not a variable name a shell can export/,
    ],
    [
      'an entry longer than exec takes',
      `BIG=${'x'.repeat(1 << 20)}\n`,
      /BIG is 1,048,580 bytes with its name; Linux passes at most 131,071 bytes per variable/,
    ],
  ])('an env file with %s is 78 before anything runs', async (_name, text, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'nccl-run-envfile-'));
    writeFileSync(join(dir, 'job.env'), text);
    const result = await ncclRun([
      '--env-file',
      join(dir, 'job.env'),
      '--iface',
      'lo',
      'train.py',
    ]).finally(() => rmSync(dir, { recursive: true, force: true }));
    expect(result.status).toBe(78);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.launched).toBe(false);
  });

  it('init takes only --out, --force, --port-range and --help: anything else is refused, and nothing is written', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'nccl-run-init-'));
    const out = join(cwd, 'job.sbatch');
    try {
      const result = await execa(bin, ['init', 'slurm', '--out', out, '--iface', 'eth0'], {
        cwd,
        reject: false,
      });
      expect(result.exitCode).toBe(64);
      expect(result.stderr).toBe(
        "nccl-run: init: unexpected '--iface'; init takes TEMPLATE [--out PATH] [--force] [--port-range LOW-HIGH]",
      );
      expect(existsSync(out)).toBe(false);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('reads ./nccl-run.env from the working directory', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'nccl-run-envfile-'));
    writeFileSync(join(cwd, 'nccl-run.env'), 'NCCL_RUN_VERIFY=sometimes\n');
    const result = await execa(bin, ['train.py'], {
      cwd,
      reject: false,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? '' },
    }).finally(() => rmSync(cwd, { recursive: true, force: true }));
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toMatch(
      /NCCL_RUN_VERIFY in .*nccl-run\.env: bad value 'sometimes': expected one of none, local, master, peers/,
    );
  });

  it('explain still prints what it learned when the decision fails, and exits with its status', async () => {
    const args = [
      ...['explain', '--json', '--facts', facts('docker-host'), '--iface', 'nope'],
      ...['--nnodes=2', '--node_rank=1', '--master_addr=10.1.0.5', 'train.py'],
    ];
    const explain = (argv: string[]) =>
      execa(bin, argv, { reject: false, extendEnv: false, env: { PATH: process.env.PATH ?? '' } });
    const { exitCode: status, stdout, stderr } = await explain(args);
    expect(status).toBe(69);
    const report = JSON.parse(stdout);
    expect(report.error).toEqual({
      message: '--iface nope is not usable (nope: does not exist)',
      exitCode: 69,
    });
    expect(report.interfaces.map((i: { name: string }) => i.name)).toContain('eno1');
    expect(report.master).toMatchObject({ host: '10.1.0.5', addresses: ['10.1.0.5'] });
    expect(report.trace).toEqual([
      { strategy: 'explicit', outcome: 'fatal', reason: report.error.message },
    ]);
    expect(report.decision).toBeNull();
    expect(stderr).toContain('--iface nope is not usable');
    const text = await explain(args.filter((arg) => arg !== '--json'));
    expect(text.exitCode).toBe(69);
    expect(text.stdout).toContain('Error      (exit 69) --iface nope is not usable');
    expect(text.stdout).toContain('eno1');
  });

  it("a refusal's explain and check --json keep every section that could be computed: what NCCL and Gloo would bind unmanaged, the stack, the data plane, readiness", async () => {
    // The master's network is docker0's, which the default excludes drop: the chain refuses (69).
    const job = ['--nnodes=2', '--node_rank=1', '--master_addr=172.17.0.5', 'train.py'];
    const nccl = (argv: string[]) =>
      execa(bin, [...argv, '--facts', facts('docker-host'), '--verify', 'none', ...job], {
        reject: false,
        extendEnv: false,
        env: { PATH: process.env.PATH ?? '', NCCL_VERSION: '2.22.3' },
      });
    const [explained, checked, text] = await Promise.all([
      nccl(['explain', '--json']),
      nccl(['check', '--json']),
      nccl(['explain']),
    ]);
    const message =
      /^172\.17\.0\.0\/16 on docker0 contains master 172\.17\.0\.5, but docker0 is excluded/;
    for (const run of [explained, checked]) {
      expect(run.exitCode, run.stderr).toBe(69);
      const report = JSON.parse(run.stdout);
      expect(report.error.message).toMatch(message);
      expect(report.decision).toBeNull();
      expect(report.trace.length).toBeGreaterThan(0);
      expect(report.interfaces.map((i: { name: string }) => i.name)).toContain('docker0');
      // With nothing set NCCL takes eno1 (docker* is its own default exclude), Gloo the hostname's lo.
      expect(report.unmanaged).toMatchObject({
        nccl: { interface: 'eno1', address: '198.18.4.21' },
        gloo: { interface: 'lo', address: '127.0.0.1' },
      });
      // The socket transport's devices: the bootstrap's eno1 first (issue 42).
      expect(report.unmanaged.nccl.devices[0]).toEqual({
        interface: 'eno1',
        address: '198.18.4.21',
      });
      expect(report.nccl).toMatchObject({
        version: '2.22.3',
        rules: '2.18-2.27',
        pick: { interface: 'eno1', address: '198.18.4.21' },
      });
      expect(report.torch.source).toEqual(expect.any(String));
      expect(report.transport).toMatchObject({ kind: 'socket' });
      expect(report.readiness.map((f: { check: string }) => f.check)).toContain('nofile');
    }
    expect(JSON.parse(checked.stdout)).toMatchObject({ ok: false, level: 'none', results: [] });
    expect(text.exitCode).toBe(69);
    expect(text.stdout).toContain(
      'Unmanaged  with nothing set, NCCL would bind eno1 198.18.4.21 and Gloo lo 127.0.0.1',
    );
    expect(text.stdout).toMatch(/^NCCL {7}2\.22\.3 \(NCCL_VERSION\), rules 2\.18-2\.27/m);
    expect(text.stdout).toMatch(
      /^ {11}data-plane devices \(NET\/Socket\): \[0\]eno1 198\.18\.4\.21/m,
    );
    expect(text.stdout).toMatch(/^Transport {2}socket/m);
    expect(text.stdout).toMatch(/^Readiness$/m);
    expect(text.stdout).toMatch(/Error {6}\(exit 69\) 172\.17\.0\.0\/16 on docker0/);
  });

  it('as a user who may not search a PATH folder, skips it as execvp does, and is 126 naming it when nothing else has the launcher', async () => {
    // root searches every folder; uid 65534 may not search a 0700 one of root's.
    const closed = mkdtempSync(join(tmpdir(), 'nccl-run-closed-'));
    chmodSync(closed, 0o700);
    const asNobody = (launcher: string) =>
      execa(
        'setpriv',
        [
          ...['--reuid', '65534', '--regid', '65534', '--clear-groups'],
          ...[bin, '--torchrun', launcher, '--verify', 'none', '--iface', 'lo'],
          ...['--log-format', 'json', 'train.py'],
        ],
        { reject: false, extendEnv: false, env: { PATH: `${closed}:/usr/bin:/bin`, HOME: '/tmp' } },
      );
    const found = await asNobody('true');
    expect(found.exitCode, found.stderr).toBe(0);
    const missing = await asNobody('no-such-launcher');
    expect(missing.exitCode).toBe(126);
    expect(missing.stderr).toContain(
      `launcher \\"no-such-launcher\\" cannot be looked up in ${closed} (EACCES: this user may not search it), and no other PATH entry has it`,
    );
    expect(missing.stderr).not.toContain('internal error');
    rmSync(closed, { recursive: true });
  });

  it('explain shows where --verify peers meets, and refuses an unreadable secret as check does, before any network', async () => {
    const job = ['--nnodes=2', '--node_rank=1', '--master_addr=198.18.20.5', 'train.py'];
    const nccl = (argv: string[]) =>
      execa(bin, [...argv, '--facts', facts('docker-host'), '--verify', 'peers', ...job], {
        reject: false,
        extendEnv: false,
        env: { PATH: process.env.PATH ?? '' },
      });
    const shown = await nccl(['explain', '--json', '--log-level', 'silent']);
    expect(shown.exitCode).toBe(0);
    expect(JSON.parse(shown.stdout).probe).toEqual({
      port: 29500,
      target: { address: '198.18.20.5', port: 29500 },
      hostsRegistry: false,
      membership: 'token',
      munge: null,
    });
    expect((await nccl(['explain'])).stdout).toContain(
      'Probe      meets at 198.18.20.5:29500; the master hosts the registry; membership by token only',
    );
    const secret = ['--probe-secret-file', '/nonexistent/secret'];
    const [explained, checked] = await Promise.all([
      nccl(['explain', ...secret]),
      nccl(['check', ...secret]),
    ]);
    for (const result of [explained, checked]) {
      expect(result.exitCode).toBe(78);
      expect(result.stderr).toContain(
        '--probe-secret-file /nonexistent/secret cannot be read (ENOENT): every node of the job needs the same secret file',
      );
    }
  });

  it('explain keeps the decision and its trace when a step after the chain fails (a kept GLOO_SOCKET_IFNAME Gloo rejects)', async () => {
    const args = [
      ...['explain', '--json', '--facts', facts('docker-host'), '--iface', 'eno1'],
      ...['--nnodes=2', '--node_rank=1', '--master_addr=10.1.0.5', 'train.py'],
    ];
    const explain = (argv: string[]) =>
      execa(bin, argv, {
        reject: false,
        extendEnv: false,
        env: { PATH: process.env.PATH ?? '', GLOO_SOCKET_IFNAME: '^lo' },
      });
    const { exitCode: status, stdout } = await explain(args);
    expect(status).toBe(78);
    const report = JSON.parse(stdout);
    expect(report.error.message).toMatch(/^GLOO_SOCKET_IFNAME='\^lo' .* uses NCCL's \^\/= syntax/);
    expect(report.decision).toMatchObject({ interface: 'eno1', strategy: 'explicit' });
    expect(report.trace).toEqual([
      expect.objectContaining({ strategy: 'explicit', outcome: 'picked' }),
    ]);
    const text = await explain(args.filter((arg) => arg !== '--json'));
    expect(text.stdout).toMatch(/^Decision {3}eno1 .* by explicit/m);
  });
});
