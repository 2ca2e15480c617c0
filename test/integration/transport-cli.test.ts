/**
 * The data plane through the built CLI over RDMA snapshots (`--facts`,
 * test/fixtures/rdma): explain's Transport section and `transport` object
 * (SPEC "RDMA transport", "Outputs"), --require-transport and
 * NCCL_RUN_REQUIRE_TRANSPORT as options (64/78 for a bad value), the 69 that
 * run and check exit with, the 78 of a conflicting NCCL_NET, and an older
 * snapshot without RDMA facts. Nothing here needs root or a network.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../bin/nccl-run.js', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/bin/nccl-run.cjs', import.meta.url));
const fixture = (name: string) =>
  fileURLToPath(new URL(`../fixtures/rdma/${name}.json`, import.meta.url));
const JOB = ['--standalone', '--nnodes', '1'];

async function cli(args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [CLI, ...args, ...JOB], {
    reject: false,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    extendEnv: false,
  });
}

beforeAll(() => {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`);
});

describe('explain', () => {
  it('prints a Transport section: the verdict, each port, the device files', async () => {
    const { stdout, exitCode } = await cli(['explain', '--facts', fixture('ib-container')]);
    expect(exitCode).toBe(0);
    const section = stdout.slice(stdout.indexOf('Transport'), stdout.indexOf('\nTrace'));
    expect(section.split('\n').slice(0, 3)).toEqual([
      'Transport  socket: no /dev/infiniband in this container',
      '  DEVICE   PORT  STATE   PHYS     LINK        RATE  NETDEV  GID                                  NCCL',
      '  mlx5_0   1     ACTIVE  LinkUp   InfiniBand  200G  ib0     0 fe80::ba59:9f03:c:8d00 IB/RoCE v1  skips: no /dev/infiniband/uverbs0',
    ]);
    expect(section).toContain(
      '  device files: none (no /dev/infiniband/uverbs*): NCCL cannot open the devices',
    );
  });

  it("has SPEC's transport object in --json", async () => {
    const { stdout } = await cli(['explain', '--json', '--facts', fixture('roce-node')]);
    const { transport } = JSON.parse(stdout);
    expect(transport).toMatchObject({
      kind: 'roce',
      deviceFiles: true,
      required: null,
      unmet: null,
    });
    expect(transport.devices[0]).toMatchObject({
      name: 'mlx5_0',
      port: 1,
      state: 'ACTIVE',
      linkLayer: 'Ethernet',
      rateGbps: 100,
      netdev: 'eth0',
      gidIndex: 3,
    });
  });

  it('reports an unmet --require-transport without failing', async () => {
    const text = await cli([
      'explain',
      '--require-transport',
      'ib',
      '--facts',
      fixture('ib-container'),
    ]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(
      "  required: ib: NOT met (run and check exit 69): --require-transport ib: NCCL's IB transport cannot run here: no /dev/infiniband in this container",
    );
    const json = await cli(['explain', '--json', '--facts', fixture('ib-container')], {
      NCCL_RUN_REQUIRE_TRANSPORT: 'ib',
    });
    expect(JSON.parse(json.stdout).transport).toMatchObject({
      required: 'ib',
      unmet: expect.stringMatching(
        /^NCCL_RUN_REQUIRE_TRANSPORT ib: NCCL's IB transport cannot run here/,
      ),
    });
  });

  it('prints the RDMA facts in the report of a NCCL_IB_HCA that selects nothing (78)', async () => {
    const { stdout, exitCode } = await cli(['explain', '--json', '--facts', fixture('ib-dgx')], {
      NCCL_IB_HCA: 'mlx5_12',
    });
    expect(exitCode).toBe(78);
    const report = JSON.parse(stdout);
    expect(report.error).toMatchObject({ exitCode: 78 });
    expect(report.error.message).toContain(
      "NCCL_IB_HCA='mlx5_12' (set in the environment) matches no RDMA port here",
    );
    expect(report.rdma.devices).toHaveLength(12);
  });

  it('reads a snapshot from before RDMA facts as a host without RDMA devices', async () => {
    const old = fileURLToPath(new URL('../fixtures/facts/infiniband-node.json', import.meta.url));
    const { stdout, exitCode } = await cli(['explain', '--json', '--facts', old]);
    expect(exitCode).toBe(0);
    const explained = JSON.parse(stdout);
    expect(explained.rdma).toBeUndefined();
    expect(explained.transport).toMatchObject({
      kind: 'socket',
      reason: 'no RDMA devices in /sys/class/infiniband',
      devices: [],
    });
  });
});

describe('--require-transport', () => {
  it('stops run before anything launches, with 69 naming what is missing', async () => {
    const run = await cli([
      '--dry-run',
      '--verify',
      'none',
      '--require-transport',
      'ib',
      '--facts',
      fixture('efa-node'),
    ]);
    expect(run.exitCode).toBe(69);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('no port NCCL can use: rdmap16s27:1 link layer Unknown');
  });

  it('passes where NCCL finds a port, and exports NCCL_NET=IB', async () => {
    const run = await cli([
      '--dry-run',
      '--verify',
      'none',
      '--require-transport',
      'ib',
      '--facts',
      fixture('ib-dgx'),
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("export NCCL_NET='IB'");
  });

  it("keeps the user's NCCL_NET, and a non-IB one conflicts: 78", async () => {
    const check = await cli(
      ['check', '--verify', 'none', '--require-transport', 'ib', '--facts', fixture('ib-dgx')],
      { NCCL_NET: 'Socket' },
    );
    expect(check.exitCode).toBe(78);
    expect(check.stderr).toContain('--require-transport ib conflicts with NCCL_NET=Socket');
  });

  it.each([
    [
      ['--require-transport', 'roce'],
      {},
      64,
      "--require-transport: bad value 'roce': expected one of ib",
    ],
    [
      [],
      { NCCL_RUN_REQUIRE_TRANSPORT: 'yes' },
      78,
      "NCCL_RUN_REQUIRE_TRANSPORT: bad value 'yes': expected one of ib",
    ],
  ])('rejects %j %j with %d', async (args, env, status, message) => {
    const run = await cli(['env', ...args, '--facts', fixture('ib-dgx')], env);
    expect(run.exitCode).toBe(status);
    expect(run.stderr).toContain(message);
  });
});
