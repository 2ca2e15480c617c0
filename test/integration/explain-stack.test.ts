/**
 * SPEC "The stack" through the real CLI: explain shows the torch and the
 * NCCL the launcher will run, and they decide torchrun's reading and NCCL's
 * rules. The installations are venvs laid out as pip lays them out
 * (test/fixtures/venv.ts): explain reads files, and the launcher never runs.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { makeVenvs } from '../fixtures/venv.js';

const bin = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));
const venvs = makeVenvs();
const { top, venv } = venvs;
afterAll(() => venvs.remove());

/** nccl-run with this test's environment: an image's NCCL_VERSION for its system NCCL, which a wheel's torch never loads. */
function ncclRun(args: string[]) {
  return execa(bin, args, {
    env: { PATH: process.env.PATH ?? '', HOME: top, NCCL_VERSION: '2.21.5' },
    extendEnv: false,
    reject: false,
    timeout: 20_000,
  });
}

async function explain(torchrun: string, args: string[]) {
  const result = await ncclRun([
    'explain',
    '--json',
    '--torchrun',
    torchrun,
    '--iface',
    'lo',
    '--verify',
    'none',
    ...args,
  ]);
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
  const torchrun = venv('t214', '2.14.1+cu130', '2.29.7');
  const plan = await explain(torchrun, [
    '--log-line-prefix-template',
    '[{rank}]',
    '--nnodes=1',
    '--master_addr=198.18.0.9',
    'train.py',
  ]);
  expect(plan.torch).toEqual({
    version: '2.14.1+cu130',
    source: join(top, 't214/lib/python3.11/site-packages/torch/version.py'),
    known: 'read',
    via: [],
    entry: 'run',
  });
  expect(plan.nccl).toMatchObject({
    version: '2.29.7',
    source: join(top, 't214/lib/python3.11/site-packages/nvidia_nccl_cu12-2.29.7.dist-info'),
    rules: '2.28+',
  });
  // 2.14: one node, no port, no endpoint: c10d on localhost:0, --master_addr unused.
  expect(plan.job.rdzvBackend).toBe('c10d');
  expect(plan.master).toBeNull();
});

it("torch 2.6 with the wheel's NCCL 2.21.5: the 2.18-2.27 rules, 2.6's static default", async () => {
  const torchrun = venv('t26', '2.6.0+cu124', '2.21.5');
  const plan = await explain(torchrun, ['--nnodes=1', 'train.py']);
  expect(plan.torch.version).toBe('2.6.0+cu124');
  expect(plan.nccl).toMatchObject({ version: '2.21.5', rules: '2.18-2.27' });
  expect(plan.job.rdzvBackend).toBe('static');
  expect(plan.master).toMatchObject({ host: '127.0.0.1', port: 29500 });
  // 2.6 has no --log-line-prefix-template: its torchrun would stop at it, so nccl-run does, at once.
  const older = await ncclRun([
    'explain',
    '--torchrun',
    torchrun,
    '--log-line-prefix-template=[x]',
    'train.py',
  ]);
  expect(older.exitCode).toBe(64);
  expect(older.stderr).toMatch(
    /torchrun argument --log-line-prefix-template: torch 2\.6\.0\+cu124's torchrun has no such option and would stop at it with \\?"unrecognized arguments/,
  );
});

// The GPU check's machine (issue 31, test/device/gpu-check.sh): torch 2.11 in
// the venv /opt/torch/.venv on Python 3.12, with the nvidia-nccl-cu13 wheel
// torch 2.11.0's wheel pins (Requires-Dist nvidia-nccl-cu13==2.28.9; the
// "13.0" row of PyTorch's .github/scripts/generate_binary_build_matrix.py).
it("the GPU machine's venv: torch 2.11 and the nvidia-nccl-cu13 wheel's NCCL 2.28.9", async () => {
  const torchrun = venv('opt/torch/.venv', '2.11.0+cu130', '2.28.9', {
    cuda: 13,
    python: '3.12.3',
    interpreter: 'python3',
  });
  const site = join(top, 'opt/torch/.venv/lib/python3.12/site-packages');
  const plan = await explain(torchrun, ['--nnodes=1', 'train.py']);
  expect(plan.torch).toMatchObject({
    version: '2.11.0+cu130',
    source: join(site, 'torch/version.py'),
    known: 'read',
  });
  expect(plan.nccl).toMatchObject({
    version: '2.28.9',
    source: join(site, 'nvidia_nccl_cu13-2.28.9.dist-info'),
    library: join(site, 'nvidia/nccl/lib/libnccl.so.2'),
    rules: '2.28+',
  });
});
