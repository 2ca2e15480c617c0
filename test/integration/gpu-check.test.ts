/**
 * The GPU check's parts that need no GPU (issue 31, test/device/): its
 * prerequisite check, which on a machine without a GPU (CI, this one) ends
 * with "no GPU here" and exit 77 having run nothing; and its trap lab
 * (trap-lab.sh), two namespaced nodes on which nccl-run picks the data link
 * while its model of NCCL says NCCL alone takes the first interface, which
 * does not reach the other node. The steps themselves run in
 * test/e2e/gpu-check-rehearsal.test.ts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const GPU_CHECK = fileURLToPath(new URL('../device/gpu-check.sh', import.meta.url));
const TRAP_LAB = fileURLToPath(new URL('../device/trap-lab.sh', import.meta.url));
const NCCL_RUN = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));

const top = mkdtempSync(join(tmpdir(), 'gpu-check-'));
afterAll(() => rmSync(top, { recursive: true, force: true }));

const gpuHere = existsSync('/dev/nvidia0') ? 'this machine has a GPU (/dev/nvidia0)' : null;

tier('the GPU check on a machine without a GPU', gpuHere, () => {
  it('prints its prerequisites, says "no GPU here" and exits 77, having run nothing', async () => {
    const out = join(top, 'out');
    const result = await execa('bash', [GPU_CHECK], {
      env: {
        OUT: out,
        TMPDIR: top,
        // Nothing carried: the node on PATH and dist/ serve, as on a developer's machine.
        GPU_CHECK_CARRIED: join(top, 'nothing-carried'),
        PATH: (process.env.PATH ?? '')
          .split(':')
          .filter((dir) => !existsSync(join(dir, 'nvidia-smi')))
          .join(':'),
      },
      reject: false,
      timeout: 30_000,
    });
    expect(result.exitCode, result.stderr).toBe(77);
    expect(result.stdout).toMatch(/^GPU check \(issue 31\): prerequisites\nGPU +missing +no /m);
    expect(result.stdout).toMatch(/^node +ok +v\d+\.\d+\.\d+, from PATH$/m);
    expect(result.stdout).toMatch(/^report +missing +no .*nothing-carried\/report\.mjs$/m);
    expect(result.stdout).toContain('no GPU here: nothing was run.');
    const summary = readFileSync(join(out, 'summary.txt'), 'utf8');
    expect(summary).toMatch(/^GPU\tmissing\t/m);
    expect(summary).toContain('CI never runs it.');
  });
});

tier('the GPU check trap lab: two namespaced nodes', netnsUnavailable, () => {
  const prefix = `gct${process.pid % 100000}`;
  beforeAll(async () => {
    const up = await execa('bash', [TRAP_LAB, 'up', prefix], { reject: false });
    expect(up.exitCode, up.stdout).toBe(0);
  });
  // Also when a test failed; removing a lab already gone is no error.
  afterAll(async () => {
    await execa('bash', [TRAP_LAB, 'down', prefix]);
  });

  /** nccl-run's explain on one node of the lab. */
  async function explainOn(node: number) {
    const result = await execa(
      'ip',
      [
        ...['netns', 'exec', `${prefix}-n${node}`, NCCL_RUN, 'explain', '--json'],
        ...['--verify', 'none', '--torchrun', '/bin/true', '--'],
        ...['--nnodes=2', `--node_rank=${node}`, '--master_addr=198.18.0.1', 'train.py'],
      ],
      { reject: false },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as {
      decision: { interface: string; address: string };
      unmanaged: { nccl: { interface: string; address: string } };
    };
  }

  /** The error code of a TCP connect from a node, or 'connected'. */
  async function connectFrom(node: number, address: string): Promise<string> {
    const script = `require('net').connect(9, process.argv[1])
      .on('connect', () => { console.log('connected'); process.exit(0); })
      .on('error', (e) => console.log(e.code))`;
    const result = await execa('ip', [
      ...['netns', 'exec', `${prefix}-n${node}`],
      ...[process.execPath, '-e', script, address],
    ]);
    return result.stdout.trim();
  }

  it('nccl-run picks ens3f0 on both nodes; its model of NCCL alone says eno1, the first interface', async () => {
    const [n0, n1] = [await explainOn(0), await explainOn(1)];
    expect(n0.decision).toMatchObject({ interface: 'ens3f0', address: '198.18.0.1' });
    expect(n1.decision).toMatchObject({ interface: 'ens3f0', address: '198.18.0.2' });
    expect(n0.unmanaged.nccl).toMatchObject({ interface: 'eno1', address: '198.18.100.1' });
    expect(n1.unmanaged.nccl).toMatchObject({ interface: 'eno1', address: '198.18.101.1' });
  });

  it("the trap: node 1 cannot reach node 0's eno1 address, and reaches its data address", async () => {
    expect(await connectFrom(1, '198.18.100.1')).toBe('ENETUNREACH');
    // Refused: the address answers (nothing listens on port 9).
    expect(await connectFrom(1, '198.18.0.1')).toBe('ECONNREFUSED');
  });

  it('probe says what this machine allowed; down leaves no namespace behind', async () => {
    const probe = await execa('bash', [TRAP_LAB, 'probe', `${prefix}p`]);
    expect(probe.stdout).toMatch(/^allowed ip netns add, ip netns exec$/m);
    expect(probe.stdout).toMatch(/^allowed ip link add type veth$/m);
    expect(probe.stdout).toMatch(/^(allowed|refused) ip link add type dummy/m);
    await execa('bash', [TRAP_LAB, 'down', prefix]);
    const { stdout } = await execa('ip', ['netns', 'list']);
    expect(stdout).not.toContain(prefix);
  });
});
