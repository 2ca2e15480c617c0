/**
 * The one-file build runs alone: built from the sources, copied into an empty
 * folder under the system temp dir (no node_modules there or above) beside
 * the shell entry bin/nccl-run, as Dockerfile.example lays them out. Plain
 * `node nccl-run.mjs` does everything but the launch, which needs an exec
 * (the shell entry's, or process.execve from Node 22.15).
 */

import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundle, LAZY_BUILTINS, lazyBuiltins } from '../../scripts/bundle.js';
import { templateText } from '../../src/templates/init.js';

const root = join(import.meta.dirname, '..', '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
};

const NODE = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning' } as const;

let buildDir: string;
let runDir: string;
let single: string;
let entry: string;

/** A clean environment: no NCCL_RUN_*, no Slurm or Kubernetes variables from the test runner. */
const cleanEnv = () => ({ PATH: dirname(process.execPath), HOME: runDir, LANG: 'C.UTF-8' });

const run = (args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [single, ...args], {
    cwd: runDir,
    env: { ...cleanEnv(), ...env },
    extendEnv: false,
    reject: false,
    timeout: 20_000,
  });

beforeAll(async () => {
  buildDir = mkdtempSync(join(tmpdir(), 'nccl-run-bundle-build-'));
  runDir = mkdtempSync(join(tmpdir(), 'nccl-run-bundle-run-'));
  const { outfile } = await bundle({ outfile: join(buildDir, 'nccl-run.mjs') });
  single = join(runDir, 'nccl-run.mjs');
  copyFileSync(outfile, single);
  entry = join(runDir, 'nccl-run');
  copyFileSync(join(root, 'bin', 'nccl-run'), entry);
  chmodSync(entry, 0o755);
  // A launcher that reports what it was given, then exits with a status of its own.
  writeFileSync(
    join(runDir, 'torchrun.mjs'),
    [
      '#!/usr/bin/env node',
      "import { writeFileSync } from 'node:fs';",
      'const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => /SOCKET|PET_/.test(k)));',
      "writeFileSync(new URL('./launched.json', import.meta.url), JSON.stringify({ argv: process.argv.slice(2), env }));",
      'process.exit(7);',
    ].join('\n'),
  );
  chmodSync(join(runDir, 'torchrun.mjs'), 0o755);
});

afterAll(() => {
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(runDir, { recursive: true, force: true });
});

describe('the one-file bundle, alone in an empty folder', () => {
  it('has no node_modules to lean on, in its folder or above', () => {
    for (let dir = runDir; dir !== dirname(dir); dir = dirname(dir)) {
      expect(existsSync(join(dir, 'node_modules')), join(dir, 'node_modules')).toBe(false);
    }
  });

  it('--version prints the package version (inlined at build time)', async () => {
    const result = await run(['--version']);
    expect(result).toMatchObject({ exitCode: 0, stdout: version });
  });

  it('--help prints the usage', async () => {
    const result = await run(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Usage:');
    expect(result.stdout).toContain('nccl-run init TEMPLATE');
  });

  it('explain resolves a single-node job to lo', async () => {
    const result = await run(['explain', '--verify', 'none', '--json', '--standalone', 'train.py']);
    expect(result.exitCode).toBe(0);
    const explained = JSON.parse(result.stdout);
    expect(explained.decision).toMatchObject({ interface: 'lo', strategy: 'local' });
    expect(explained.env).toMatchObject({ NCCL_SOCKET_IFNAME: '=lo', GLOO_SOCKET_IFNAME: 'lo' });
    expect(explained.command).toEqual(['torchrun', '--standalone', 'train.py']);
  });

  it('explain --iface lo --verify none picks lo by the explicit strategy', async () => {
    const result = await run(['explain', '--iface', 'lo', '--verify', 'none', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).decision).toMatchObject({
      interface: 'lo',
      strategy: 'explicit',
    });
  });

  it('an error exits with its status, as in the normal build', async () => {
    const result = await run(['explain', '--verify', 'sometimes']);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain("--verify: bad value 'sometimes'");
  });

  it('launches through the shell entry beside it: torchrun arguments untouched, its status through', async () => {
    const result = await execa(
      entry,
      [
        '--verify',
        'none',
        '--torchrun',
        join(runDir, 'torchrun.mjs'),
        '--standalone',
        '--nproc-per-node=1',
        'train.py',
        '--iface',
        "it's $HOME",
      ],
      {
        cwd: runDir,
        env: { ...cleanEnv(), PATH: `${dirname(process.execPath)}:/usr/bin:/bin` },
        extendEnv: false,
        reject: false,
      },
    );
    expect(result.exitCode).toBe(7);
    const launched = JSON.parse(readFileSync(join(runDir, 'launched.json'), 'utf8'));
    expect(launched.argv).toEqual([
      '--standalone',
      '--nproc-per-node=1',
      'train.py',
      '--iface',
      "it's $HOME",
    ]);
    expect(launched.env).toMatchObject({
      NCCL_SOCKET_IFNAME: '=lo',
      GLOO_SOCKET_IFNAME: 'lo',
      TP_SOCKET_IFNAME: 'lo',
    });
  });

  it('with plain node and no process.execve, refuses the launch with 78 and says what to run', async () => {
    rmSync(join(runDir, 'launched.json'), { force: true });
    const result = await run(['--verify', 'none', '--torchrun', join(runDir, 'torchrun.mjs'), 'x']);
    const execve = (process as { execve?: unknown }).execve;
    expect(execve, 'this Node has process.execve: the launch would succeed').toBeUndefined();
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('start nccl-run with its bin/nccl-run script');
    expect(existsSync(join(runDir, 'launched.json'))).toBe(false);
  });

  it('fills the job in from Slurm inside an allocation', async () => {
    const result = await run(['env', '--format', 'json', '--verify', 'none'], {
      SLURM_JOB_ID: '1000',
      SLURM_JOB_NODELIST: 'localhost',
      SLURM_NNODES: '1',
      SLURM_NODEID: '0',
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      PET_MASTER_ADDR: 'localhost',
      PET_MASTER_PORT: '17000',
    });
  });

  it.each(['slurm', 'k8s', 'pytorchjob', 'lws', 'docker', 'compose', 'env'] as const)(
    'init %s prints the template it carries inside',
    async (name) => {
      const result = await run(['init', name]);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe(templateText(name).replace(/\n$/, ''));
    },
  );

  it('loads pino-pretty on a terminal (bundled, not looked up in node_modules)', async () => {
    const command = `${process.execPath} ${single} --dry-run --verify none --standalone train.py`;
    const result = await execa('script', ['-qfc', command, '/dev/null'], {
      cwd: runDir,
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
      timeout: 20_000,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/INFO.*using lo 127\.0\.0\.1/);
    expect(result.stdout).not.toContain('"level"');
  });

  it('a dry run that logs nothing loads neither pino nor the built-ins it does not use', async () => {
    const preload = join(runDir, 'print-modules.cjs');
    writeFileSync(
      preload,
      "process.on('exit', () => process.stderr.write(JSON.stringify(process.moduleLoadList)));\n",
    );
    const dryRun = ['--dry-run', '--iface', 'lo', '--verify', 'none', '--log-level', 'silent'];
    const result = await execa(process.execPath, ['-r', preload, single, ...dryRun, 'train.py'], {
      cwd: runDir,
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(result.exitCode).toBe(0);
    const loaded: string[] = JSON.parse(result.stderr);
    expect(loaded).toContain('NativeModule os');
    for (const builtin of LAZY_BUILTINS) expect(loaded).not.toContain(`NativeModule ${builtin}`);
  });

  it('a stand-in built-in is the real one at its first use', async () => {
    const source = join(buildDir, 'uses-builtins.mjs');
    writeFileSync(
      source,
      [
        "import { createHash } from 'node:crypto';",
        "import { execFileSync } from 'node:child_process';",
        "import { setTimeout as delay } from 'node:timers/promises';",
        "const crypto = require('crypto');",
        'delay(1).then(() => {',
        "  process.stdout.write(createHash('sha256').update('nccl-run').digest('hex') + ' ');",
        "  process.stdout.write(String(crypto.createHash === createHash) + ' ');",
        "  process.stdout.write(execFileSync('sh', ['-c', 'echo ran']).toString());",
        '});',
      ].join('\n'),
    );
    const outfile = join(buildDir, 'uses-builtins.cjs');
    await build({
      entryPoints: [source],
      outfile,
      format: 'cjs',
      plugins: [lazyBuiltins],
      ...NODE,
    });
    const result = await execa(process.execPath, [outfile], { reject: false });
    const expected = createHash('sha256').update('nccl-run').digest('hex');
    expect(result).toMatchObject({ exitCode: 0, stdout: `${expected} true ran` });
  });

  it('is a command itself: the shebang finds node on PATH', async () => {
    chmodSync(single, 0o755);
    const result = await execa(single, ['--version'], {
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: version });
  });
});
