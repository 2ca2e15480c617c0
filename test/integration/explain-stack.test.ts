/**
 * SPEC "The stack" through the real CLI: explain shows the torch and the
 * NCCL the launcher will run, and they decide torchrun's reading and NCCL's
 * rules. The installations are laid out in a temporary folder as pip lays
 * out a venv with the torch and nvidia-nccl-cu12 wheels (their RECORD file
 * lists: torch/version.py, nvidia/nccl/lib/libnccl.so.2 as a plain file, the
 * nvidia_nccl_cu12-X.Y.Z.dist-info folder; wheels cannot be installed here),
 * its python a link to this machine's /usr/bin/python3. Nothing is imported:
 * explain reads files, and the launcher never runs.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));
const top = mkdtempSync(join(tmpdir(), 'explain-stack-'));
afterAll(() => rmSync(top, { recursive: true, force: true }));

/** A venv holding torch `torch` and, when given, the NCCL wheel `nccl`; returns its torchrun. */
function venv(name: string, torch: string, nccl: string | null): string {
  const prefix = join(top, name);
  const site = join(prefix, 'lib/python3.11/site-packages');
  const files: Record<string, string> = {
    'pyvenv.cfg': 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n',
    'bin/torchrun': `#!${prefix}/bin/python\nimport sys\nfrom torch.distributed.run import main\n`,
    [`${site}/torch/__init__.py`]: '',
    [`${site}/torch/version.py`]: `__version__ = '${torch}'\n`,
  };
  if (nccl !== null) {
    files[`${site}/nvidia/nccl/lib/libnccl.so.2`] = 'ELF';
    files[`${site}/nvidia_nccl_cu12-${nccl}.dist-info/METADATA`] = `Version: ${nccl}\n`;
  }
  for (const [path, text] of Object.entries(files)) {
    const file = path.startsWith('/') ? path : join(prefix, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  symlinkSync('/usr/bin/python3', join(prefix, 'bin/python'));
  return join(prefix, 'bin/torchrun');
}

async function explain(torchrun: string, args: string[]) {
  const result = await execa(
    bin,
    ['explain', '--json', '--torchrun', torchrun, '--iface', 'lo', '--verify', 'none', ...args],
    {
      // An image's NCCL_VERSION for its system NCCL, which a wheel's torch never loads.
      env: { PATH: process.env.PATH ?? '', HOME: top, NCCL_VERSION: '2.21.5' },
      extendEnv: false,
      reject: false,
      timeout: 20_000,
    },
  );
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as {
    torch: { version: string | null; source: string };
    nccl: { version: string | null; source: string; rules: string };
    job: { rdzvBackend: string };
    master: unknown;
    warnings: string[];
  };
}

it("a venv's torch 2.14 and its wheel's NCCL 2.29: versions, sources, rules, 2.14's reading", async () => {
  const torchrun = venv('t214', '2.14.1+cu130', '2.29.7');
  const plan = await explain(torchrun, [
    '--log-line-prefix-template',
    '[{rank}]',
    '--nnodes=1',
    '--master-addr=198.18.0.9',
    'train.py',
  ]);
  expect(plan.torch).toEqual({
    version: '2.14.1+cu130',
    source: join(top, 't214/lib/python3.11/site-packages/torch/version.py'),
  });
  expect(plan.nccl).toMatchObject({
    version: '2.29.7',
    source: join(top, 't214/lib/python3.11/site-packages/nvidia_nccl_cu12-2.29.7.dist-info'),
    rules: '2.28+',
  });
  // 2.14: one node, no port, no endpoint: c10d on localhost:0, --master-addr unused.
  expect(plan.job.rdzvBackend).toBe('c10d');
  expect(plan.master).toBeNull();
});

it("torch 2.6 with the wheel's NCCL 2.21.5: the 2.19-2.27 rules, 2.6's static default", async () => {
  const torchrun = venv('t26', '2.6.0+cu124', '2.21.5');
  const plan = await explain(torchrun, ['--nnodes=1', 'train.py']);
  expect(plan.torch.version).toBe('2.6.0+cu124');
  expect(plan.nccl).toMatchObject({ version: '2.21.5', rules: '2.19-2.27' });
  expect(plan.job.rdzvBackend).toBe('static');
  expect(plan.master).toMatchObject({ host: '127.0.0.1', port: 29500 });
  // 2.6 has no --log-line-prefix-template: torchrun would stop at it.
  const older = await explain(torchrun, ['--log-line-prefix-template=[x]', 'train.py']);
  expect(older.warnings).toContainEqual(
    expect.stringMatching(/^torch 2\.6\.0\+cu124's torchrun has no --log-line-prefix-template/),
  );
});
