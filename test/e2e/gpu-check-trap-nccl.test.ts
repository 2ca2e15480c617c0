/**
 * The GPU check's trap (test/device/trap-lab.sh) against the real NCCL, here
 * without a GPU: ncclGetUniqueId runs NCCL's bootstrap interface choice, the
 * ncclFindInterfaces its socket transport runs too (test/lab/nccl-oracle.ts).
 * On each node of the lab, Debian sid's NCCL 2.29.7 (the 2.28+ rules, as
 * torch 2.11's 2.28.9) takes eno1 by itself, the interface that does not
 * reach the other node, as nccl-run's explain predicts (`unmanaged.nccl`);
 * given the variables nccl-run exports there (`env --format json`), it takes
 * ens3f0, the data link nccl-run decided. What the GPU machine adds is the
 * data path itself.
 */
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { labRoot } from '../lab/debian-root.js';
import { ncclBootstrap } from '../lab/nccl-oracle.js';
import { netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const TRAP_LAB = fileURLToPath(new URL('../device/trap-lab.sh', import.meta.url));
const NCCL_RUN = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));

/** Debian sid's libnccl2 (LAB.md), whose record says how its bootstrap line is spelt. */
const SID_NCCL = '2.29.7';
const sid = netnsUnavailable === null ? labRoot('sid') : { error: netnsUnavailable };

tier('the GPU check trap lab against the real NCCL 2.29', 'error' in sid ? sid.error : null, () => {
  const prefix = `gcn${process.pid % 100000}`;
  const lab = { ns: (host: string) => `${prefix}-${host}` };
  const root = 'path' in sid ? sid.path : '';
  beforeAll(async () => {
    const up = await execa('bash', [TRAP_LAB, 'up', prefix], { reject: false });
    expect(up.exitCode, up.stdout).toBe(0);
  });
  // Also when a test failed; removing a lab already gone is no error.
  afterAll(async () => {
    await execa('bash', [TRAP_LAB, 'down', prefix]);
  });

  /** nccl-run on node `node` of the lab, for that node's part of the GPU check's job. */
  async function ncclRun(node: number, command: 'explain' | 'env') {
    const result = await execa('ip', [
      ...['netns', 'exec', lab.ns(`n${node}`), NCCL_RUN, command],
      ...(command === 'explain' ? ['--json'] : ['--format', 'json']),
      ...['--verify', 'none', '--torchrun', '/bin/true', '--'],
      ...['--nnodes=2', `--node_rank=${node}`, '--master_addr=198.18.0.1', 'allreduce.py'],
    ]);
    return JSON.parse(result.stdout);
  }

  for (const node of [0, 1]) {
    it(`node ${node}: NCCL alone takes eno1, as nccl-run predicts; with nccl-run's variables, ens3f0`, async () => {
      const explained = await ncclRun(node, 'explain');
      const alone = await ncclBootstrap(lab, `n${node}`, root, SID_NCCL, {});
      // The bootstrap's bind is the first of the data-plane devices explain also lists.
      const { interface: name, address, devices } = explained.unmanaged.nccl;
      expect({ interface: name, address }, alone.log).toEqual(alone.bind);
      expect(devices[0], alone.log).toEqual(alone.bind);
      expect(alone.bind).toEqual({ interface: 'eno1', address: `198.18.10${node}.1` });

      const exported = await ncclRun(node, 'env');
      const through = await ncclBootstrap(lab, `n${node}`, root, SID_NCCL, exported);
      expect(through.bind, through.log).toEqual({
        interface: explained.decision.interface,
        address: explained.decision.address,
      });
      expect(through.bind).toEqual({ interface: 'ens3f0', address: `198.18.0.${node + 1}` });
    });
  }
});
