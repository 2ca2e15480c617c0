/**
 * SPEC "The stack" through the real CLI: explain shows the torch and the
 * NCCL the launcher will run, and they decide torchrun's reading and NCCL's
 * rules. The installations are laid out in a temporary folder as pip lays
 * out a venv with the torch and nvidia-nccl-cu12 or -cu13 wheels (their
 * RECORD file lists: torch/version.py, nvidia/nccl/lib/libnccl.so.2 as a
 * plain file, the nvidia_nccl_cuNN-X.Y.Z.dist-info folder; wheels cannot be
 * installed here), its python a link to this machine's /usr/bin/python3.
 * Nothing is imported: explain reads files, and the launcher never runs.
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

interface VenvSpec {
  torch: string;
  /** The nvidia-nccl-cuNN wheel's version; null for none. */
  nccl: string | null;
  /** Its CUDA major: nvidia-nccl-cu12 or -cu13. */
  cuda?: 12 | 13;
  /** Python X.Y.Z, as pyvenv.cfg states it. */
  python?: string;
  /** The interpreter's name in bin/, which torchrun's #! line names. */
  interpreter?: string;
}

/** A venv at `path` (under the temporary folder) as pip lays it out; returns its torchrun. */
function venv(path: string, spec: VenvSpec): string {
  const { torch, nccl, cuda = 12, python = '3.11.2', interpreter = 'python' } = spec;
  const prefix = join(top, path);
  const site = join(prefix, `lib/python${python.split('.').slice(0, 2).join('.')}/site-packages`);
  const files: Record<string, string> = {
    'pyvenv.cfg': `home = /usr/bin\ninclude-system-site-packages = false\nversion = ${python}\n`,
    'bin/torchrun': `#!${prefix}/bin/${interpreter}\nimport sys\nfrom torch.distributed.run import main\n`,
    [`${site}/torch/__init__.py`]: '',
    [`${site}/torch/version.py`]: `__version__ = '${torch}'\n`,
  };
  if (nccl !== null) {
    files[`${site}/nvidia/nccl/lib/libnccl.so.2`] = 'ELF';
    files[`${site}/nvidia_nccl_cu${cuda}-${nccl}.dist-info/METADATA`] = `Version: ${nccl}\n`;
  }
  for (const [file, text] of Object.entries(files)) {
    const at = file.startsWith('/') ? file : join(prefix, file);
    mkdirSync(dirname(at), { recursive: true });
    writeFileSync(at, text);
  }
  symlinkSync('/usr/bin/python3', join(prefix, 'bin', interpreter));
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
    nccl: { version: string | null; source: string; library: string | null; rules: string };
    job: { rdzvBackend: string };
    master: unknown;
    warnings: string[];
  };
}

it("a venv's torch 2.14 and its wheel's NCCL 2.29: versions, sources, rules, 2.14's reading", async () => {
  const torchrun = venv('t214', { torch: '2.14.1+cu130', nccl: '2.29.7' });
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
  const torchrun = venv('t26', { torch: '2.6.0+cu124', nccl: '2.21.5' });
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

// The GPU check's machine (issue 31, test/device/gpu-check.sh): torch 2.11 in
// the venv /opt/torch/.venv on Python 3.12, with the nvidia-nccl-cu13 wheel
// torch 2.11.0's wheel pins (Requires-Dist nvidia-nccl-cu13==2.28.9; the
// "13.0" row of PyTorch's .github/scripts/generate_binary_build_matrix.py).
it("the GPU machine's venv: torch 2.11 and the nvidia-nccl-cu13 wheel's NCCL 2.28.9", async () => {
  const torchrun = venv('opt/torch/.venv', {
    torch: '2.11.0+cu130',
    nccl: '2.28.9',
    cuda: 13,
    python: '3.12.3',
    interpreter: 'python3',
  });
  const site = join(top, 'opt/torch/.venv/lib/python3.12/site-packages');
  const plan = await explain(torchrun, ['--nnodes=1', 'train.py']);
  expect(plan.torch).toEqual({ version: '2.11.0+cu130', source: join(site, 'torch/version.py') });
  expect(plan.nccl).toMatchObject({
    version: '2.28.9',
    source: join(site, 'nvidia_nccl_cu13-2.28.9.dist-info'),
    library: join(site, 'nvidia/nccl/lib/libnccl.so.2'),
    rules: '2.28+',
  });
});
