/**
 * The GPU check's (a) (test/device/stack-checks.ts) on what the device
 * machine would show: the venv at /opt/torch/.venv with torch 2.11.0+cu130
 * and the nvidia-nccl-cu13 2.28.9 wheel torch 2.11.0 pins.
 */
import { describe, expect, it } from 'vitest';
import { type PythonStack, stackRows } from '../../device/stack-checks.js';

const SITE = '/opt/torch/.venv/lib/python3.12/site-packages';
const explained = {
  torch: { version: '2.11.0+cu130', source: `${SITE}/torch/version.py` },
  nccl: {
    version: '2.28.9',
    source: `${SITE}/nvidia_nccl_cu13-2.28.9.dist-info`,
    library: `${SITE}/nvidia/nccl/lib/libnccl.so.2`,
  },
};
const python: PythonStack = {
  executable: '/opt/torch/.venv/bin/python3',
  prefix: '/opt/torch/.venv',
  basePrefix: '/usr',
  torch: '2.11.0+cu130',
  torchFile: `${SITE}/torch/__init__.py`,
  ncclRuntime: '2.28.9',
  ncclWheel: {
    name: 'nvidia-nccl-cu13',
    version: '2.28.9',
    distInfo: `${SITE}/nvidia_nccl_cu13-2.28.9.dist-info`,
  },
  loadedNccl: [`${SITE}/nvidia/nccl/lib/libnccl.so.2`],
};
const launcher = {
  torchrun: '/opt/torch/.venv/bin/torchrun',
  interpreter: '/opt/torch/.venv/bin/python3',
};
const asIs = (path: string) => path;
const failed = (rows: { check: string; status: string }[]) =>
  rows.filter((r) => r.status !== 'pass').map((r) => r.check);

describe('stackRows', () => {
  it("nccl-run's reading agrees with the running torch: every row passes", () => {
    const rows = stackRows(explained, python, launcher, asIs);
    expect(failed(rows)).toEqual([]);
    expect(rows.find((r) => r.check === 'a) NCCL version')?.detail).toBe(
      'nccl-run read 2.28.9; nvidia-nccl-cu13 is 2.28.9; torch.cuda.nccl.version() is 2.28.9',
    );
  });

  it('paths compare after resolving links: the venv python is a link to the base one', () => {
    const links: Record<string, string> = {
      '/opt/torch/.venv/bin/python3': '/usr/bin/python3.12',
      '/venv-link/bin/python3': '/usr/bin/python3.12',
    };
    const resolve = (path: string) => links[path] ?? path;
    const rows = stackRows(
      explained,
      { ...python, executable: '/venv-link/bin/python3' },
      launcher,
      resolve,
    );
    expect(failed(rows)).toEqual([]);
  });

  it('a preloaded libnccl of another version: the runtime disagrees with the wheel', () => {
    const rows = stackRows(
      explained,
      { ...python, ncclRuntime: '2.29.2', loadedNccl: ['/usr/local/lib/libnccl.so.2.29.2'] },
      launcher,
      asIs,
    );
    expect(failed(rows)).toEqual(['a) NCCL version', 'a) NCCL library']);
  });

  it('a torch nccl-run could not read fails on version and source, naming why', () => {
    const rows = stackRows(
      { ...explained, torch: { version: null, source: 'no torch package for /usr/bin/python3' } },
      python,
      launcher,
      asIs,
    );
    expect(failed(rows)).toEqual(['a) torch version', 'a) torch source']);
    expect(rows[1]?.detail).toMatch(/nccl-run read nothing \(no torch package/);
  });
});
