/**
 * A single-node IPv6 job: NCCL skips ::1, so nccl-run runs NCCL's sockets on
 * lo's 127.0.0.1 (family ipv4), while torch's store still binds [::1]. The
 * store check goes by the rendezvous' family, not the decision's: it failed
 * with 68 ("the master ::1 has no ipv4 address").
 */
import { expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

tier('verify master on a single-node IPv6 job', netnsUnavailable, () => {
  it('binds the store port on [::1] although NCCL gets 127.0.0.1', async () => {
    const lab = new Lab('v6');
    try {
      await lab.host('s');
      const result = await lab.exec(
        's',
        BIN,
        [
          ...['check', '--json', '--verify', 'master', '--nnodes=1'],
          ...['--master_addr=::1', '--master_port=29500', 'train.py'],
        ],
        { reject: false, timeout: 20_000 },
      );
      expect(result.exitCode, String(result.stderr)).toBe(0);
      const report = JSON.parse(String(result.stdout));
      expect(report.results).toEqual([
        expect.objectContaining({ check: 'bind', address: '::1', ok: true }),
      ]);
    } finally {
      await lab.cleanup();
    }
  });
});
