/**
 * The probe mesh's listeners bind port 0 (src/peers/peers.ts: the ephemeral
 * probe service, as NCCL's bootstrap and socket transport bind theirs), so
 * the kernel draws their ports from net.ipv4.ip_local_port_range, the range
 * `nccl-run init --port-range` writes: in a network namespace of its own
 * with a narrow range, every listener lands inside it, and once the range is
 * used up the next bind fails (EADDRINUSE) instead of going outside it.
 * explain's Ports line reads the same namespace's range.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../../lab/netns.js';
import { tier } from '../../lab/tier.js';

const CHECKOUT = join(import.meta.dirname, '..', '..', '..');
const RANGE = [40_000, 40_003] as const;

/** Port-0 probe services on loopback until a bind fails: the ports, then the error. */
const LISTENERS = `
import { startProbeService } from './src/probe/service.ts';
const ports = [];
let failure = null;
while (failure === null && ports.length < 16) {
  try {
    const service = await startProbeService({ host: '127.0.0.1', port: 0, token: '0123456789abcdef0123456789abcdef', maxPending: 1 });
    ports.push(service.port);
  } catch (error) {
    failure = error.code;
  }
}
console.log(JSON.stringify({ ports, failure }));
process.exit(0);
`;

tier(
  'ephemeral listeners inside net.ipv4.ip_local_port_range (a network namespace)',
  netnsUnavailable,
  () => {
    const lab = new Lab('tplpr');
    beforeAll(async () => {
      await lab.host('n');
      await lab.exec('n', 'sh', [
        '-c',
        `echo '${RANGE[0]} ${RANGE[1]}' > /proc/sys/net/ipv4/ip_local_port_range`,
      ]);
    });
    afterAll(() => lab.cleanup());

    it('every port-0 listener of the probe service lands in the range, and none outside it', async () => {
      const { stdout } = await lab.exec(
        'n',
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', LISTENERS],
        { cwd: CHECKOUT },
      );
      const { ports, failure } = JSON.parse(String(stdout)) as { ports: number[]; failure: string };
      expect([...ports].sort()).toEqual([40_000, 40_001, 40_002, 40_003]);
      expect(failure).toBe('EADDRINUSE');
    });

    it("explain's Ports line names the namespace's range, not the host's", async () => {
      const { stdout } = await lab.exec(
        'n',
        join(CHECKOUT, 'bin', 'nccl-run'),
        ['explain', '--nnodes=1', '--master_addr=127.0.0.1', 'train.py'],
        { cwd: CHECKOUT },
      );
      expect(String(stdout)).toMatch(
        /^Ports {6}ephemeral ports 40000-40003 \(net\.ipv4\.ip_local_port_range/m,
      );
    });
  },
);
