/**
 * The artifacts of `npm run release` (scripts/release.js), each used as a
 * user would: the single executables run (arm64 under Debian's qemu-user,
 * no binfmt), the wheel installed offline into a fresh venv by its own pip,
 * the npm package installed from its tarball. The launch guarantees of the
 * x64 executable are in launch.test.ts, launch-signals.test.ts and
 * hand-over.test.ts, which run every test against it too; its torchrun jobs
 * in the lab roots in test/e2e/single-executable.test.ts.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAN_PAGE_PATH } from '../../scripts/man-page.js';
import { NODE_VERSION, OTHER_NODE_VERSION, officialNode } from '../../scripts/official-node.js';
import {
  buildProgram,
  injectBlob,
  makeBlob,
  PLATFORMS,
  RELEASE_DIR,
  WHEEL_MAN_PAGE,
} from '../../scripts/release.js';

const { version } = JSON.parse(readFileSync(join(RELEASE_DIR, '..', 'package.json'), 'utf8')) as {
  version: string;
};
const FACTS = join(import.meta.dirname, '..', 'fixtures', 'facts', 'lab-docker-bridges.json');

/** What a job's node sees without this machine's test-runner variables. */
const cleanEnv = (extra: Record<string, string> = {}) => ({
  PATH: '/usr/bin:/bin',
  HOME: tmpdir(),
  ...extra,
});

const artifact = (name: string) => join(RELEASE_DIR, name);

let work: string;
beforeAll(() => {
  for (const { binary } of Object.values(PLATFORMS)) {
    if (!existsSync(artifact(binary))) {
      throw new Error(`${artifact(binary)} is missing: run npm run release`);
    }
  }
  work = mkdtempSync(join(tmpdir(), 'ncr-release-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run release', () => {
  it('writes a SHA256SUMS that sha256sum -c accepts, naming every artifact', async () => {
    const sums = readFileSync(artifact('SHA256SUMS'), 'utf8');
    const named = sums
      .trim()
      .split('\n')
      .map((line) => line.split('  ')[1]);
    const files = readdirSync(RELEASE_DIR).filter((name) => name !== 'SHA256SUMS');
    expect(named.sort()).toEqual(files.sort());
    expect(files.sort()).toEqual(
      [
        'nccl-run-linux-arm64',
        'nccl-run-linux-x64',
        `nccl-run-${version}.tgz`,
        `nccl_run-${version}-py3-none-manylinux_2_28_aarch64.whl`,
        `nccl_run-${version}-py3-none-manylinux_2_28_x86_64.whl`,
      ].sort(),
    );
    const check = await execa('sha256sum', ['-c', 'SHA256SUMS'], { cwd: RELEASE_DIR });
    expect(check.stdout.split('\n')).toHaveLength(files.length);
  });
});

describe('the single executables', () => {
  /** `args` through the binary for `arch`, arm64 under qemu-user. */
  const run = (arch: 'x64' | 'arm64', args: string[]) => {
    const { binary, runner } = PLATFORMS[arch];
    const [file, ...rest] = [...runner, artifact(binary), ...args] as [string, ...string[]];
    return execa(file, rest, { env: cleanEnv(), extendEnv: false, reject: false });
  };

  it.each(['x64', 'arm64'] as const)('%s: --version names the Node it embeds', async (arch) => {
    const { stdout, exitCode } = await run(arch, ['--version']);
    expect(exitCode).toBe(0);
    expect(stdout).toBe(`${version} (single executable, Node v${NODE_VERSION})`);
  });

  it('arm64 under qemu-user decides as x64 does on the same facts', async () => {
    const args = [
      ...['explain', '--json', '--facts', FACTS, '--'],
      ...['--nnodes=2', '--node_rank=1', '--master_addr=198.18.0.1', 'train.py'],
    ];
    const [x64, arm64] = await Promise.all([run('x64', args), run('arm64', args)]);
    expect(x64.exitCode, x64.stderr).toBe(0);
    const decision = JSON.parse(x64.stdout) as { decision: { interface: string } };
    expect(decision.decision.interface).not.toBe('');
    expect(arm64.exitCode, arm64.stderr).toBe(0);
    expect(JSON.parse(arm64.stdout)).toEqual(JSON.parse(x64.stdout));
  });

  it('a blob put into another Node than the one it was built for is one line and 70, before anything runs', async () => {
    // Node 22 in place of the official Node the blob was made for. (A Node older than 22
    // cannot read a Node 24 blob and crashes before any of nccl-run runs: release.js makes
    // the blob with the very Node it injects it into, and runs the result.)
    const program = await buildProgram(work);
    const wrong = await injectBlob(
      officialNode('x64', OTHER_NODE_VERSION),
      makeBlob('x64', program, work),
      join(work, 'wrong-node'),
    );
    const result = await execa(wrong, ['--version'], {
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(result.exitCode).toBe(70);
    expect(result.stdout).toBe('');
    // Node itself says first that it rejects the blob's code cache: its line, not ours.
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      `nccl-run: this single executable was built for Node v${NODE_VERSION} but runs on Node v${OTHER_NODE_VERSION}: it was put together wrongly; use an artifact of \`npm run release\``,
    );
  });
});

describe('the wheel', () => {
  it("installs offline into a fresh venv, and nccl-run there reads that venv's torch", async () => {
    const venv = join(work, 'venv');
    await execa('/usr/bin/python3', ['-m', 'venv', venv]);
    const wheel = artifact(`nccl_run-${version}-py3-none-${PLATFORMS.x64.wheelTag}.whl`);
    await execa(join(venv, 'bin/pip'), ['install', '--no-index', '--quiet', wheel], {
      env: cleanEnv(),
      extendEnv: false,
    });
    // torch cannot be installed here (no PyPI): its files as its wheel lays them, and the
    // torchrun console script pip would write. nccl-run reads them; nothing imports them.
    const site = join(venv, 'lib', readdirSync(join(venv, 'lib'))[0] as string, 'site-packages');
    mkdirSync(join(site, 'torch'));
    writeFileSync(join(site, 'torch/__init__.py'), '');
    writeFileSync(join(site, 'torch/version.py'), "__version__ = '2.6.0+cu124'\n");
    writeFileSync(
      join(venv, 'bin/torchrun'),
      `#!${venv}/bin/python\nimport sys\nfrom torch.distributed.run import main\n`,
      { mode: 0o755 },
    );
    // As in a job script that activated the venv.
    const { stdout } = await execa(
      join(venv, 'bin/nccl-run'),
      ['explain', '--json', '--iface', 'lo', '--', '--nnodes=1', 'train.py'],
      { env: cleanEnv({ PATH: `${venv}/bin:/usr/bin:/bin` }), extendEnv: false },
    );
    const torch = (JSON.parse(stdout) as { torch: { version: string; source: string } }).torch;
    expect(torch).toMatchObject({
      version: '2.6.0+cu124',
      source: join(site, 'torch/version.py'),
    });
  });
});

describe("the wheel's man page", () => {
  it('lies in the wheel where pip puts man pages, for both platforms', async () => {
    for (const { wheelTag } of Object.values(PLATFORMS)) {
      const { stdout } = await execa('unzip', [
        '-l',
        artifact(`nccl_run-${version}-py3-none-${wheelTag}.whl`),
      ]);
      expect(stdout).toContain(` nccl_run-${version}.data/${WHEEL_MAN_PAGE}\n`);
    }
  });

  it("`man nccl-run` finds it after pip install, from the venv's bin on PATH alone", async () => {
    const venv = join(work, 'venv-man');
    await execa('/usr/bin/python3', ['-m', 'venv', venv]);
    const wheel = artifact(`nccl_run-${version}-py3-none-${PLATFORMS.x64.wheelTag}.whl`);
    await execa(join(venv, 'bin/pip'), ['install', '--no-index', '--quiet', wheel], {
      env: cleanEnv(),
      extendEnv: false,
    });
    const installed = join(venv, 'share/man/man1/nccl-run.1');
    expect(readFileSync(installed, 'utf8')).toBe(readFileSync(MAN_PAGE_PATH, 'utf8'));
    // No MANPATH: man-db maps a PATH entry that manpath.config does not name to the
    // ../share/man beside it (manpath(5), man-db 2.11, "SEARCH PATH"). So a job that
    // activated the venv reads the page; without the venv on PATH, man has none.
    const manEnv = (path: string) => ({ env: cleanEnv({ PATH: path }), extendEnv: false });
    const found = await execa('man', ['-w', 'nccl-run'], manEnv(`${venv}/bin:/usr/bin:/bin`));
    expect(found.stdout).toBe(installed);
    const shown = await execa('man', ['nccl-run'], manEnv(`${venv}/bin:/usr/bin:/bin`));
    expect(shown.stdout).toContain('--verify-timeout');
    const without = await execa('man', ['-w', 'nccl-run'], {
      ...manEnv('/usr/bin:/bin'),
      reject: false,
    });
    expect(without.exitCode).toBe(16);
  });
});

describe('the npm package', () => {
  it('packs nccl-run(1) and names it as its man page', async () => {
    const [packed] = JSON.parse(
      (await execa('npm', ['pack', '--dry-run', '--json'], { cwd: join(RELEASE_DIR, '..') }))
        .stdout,
    ) as [{ files: { path: string }[] }];
    expect(packed.files.map((file) => file.path)).toContain('man/nccl-run.1');
    const { stdout } = await execa('tar', ['-tzf', artifact(`nccl-run-${version}.tgz`)]);
    expect(stdout.split('\n')).toContain('package/man/nccl-run.1');
  });

  it('installs from its tarball with npm install -g, and runs on Node 20', async () => {
    const prefix = join(work, 'npm-global');
    await execa('npm', [
      // Its dependencies from npm ci's cache; the registry answers their metadata.
      ...['install', '-g', '--prefer-offline', '--no-audit', '--no-fund', '--prefix', prefix],
      artifact(`nccl-run-${version}.tgz`),
    ]);
    const { stdout } = await execa(join(prefix, 'bin/nccl-run'), ['--version'], {
      env: cleanEnv({ PATH: `${join(process.execPath, '..')}:/usr/bin:/bin` }),
      extendEnv: false,
    });
    expect(stdout).toBe(version);
    // npm links the package's `man` into the prefix's share/man (npm docs, package.json
    // "man"; npm 11's bin-links lib/link-mans.js links only an array `man`, so package.json
    // gives one), which man-db finds from the prefix's bin on PATH, as for the wheel.
    expect(readFileSync(join(prefix, 'share/man/man1/nccl-run.1'), 'utf8')).toBe(
      readFileSync(MAN_PAGE_PATH, 'utf8'),
    );
    const found = await execa('man', ['-w', 'nccl-run'], {
      env: cleanEnv({ PATH: `${join(prefix, 'bin')}:/usr/bin:/bin` }),
      extendEnv: false,
    });
    expect(readFileSync(found.stdout, 'utf8')).toBe(readFileSync(MAN_PAGE_PATH, 'utf8'));
  });
});
