/**
 * A failing verification logs the warnings gathered so far before its error
 * (SPEC "Verification"): they often say why it failed. Here --iface names
 * eth0 while the kernel routes to the master through eth1, and the master
 * never answers.
 */
import { afterAll, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

tier('a failing verification and its warnings', netnsUnavailable, () => {
  const lab = new Lab('vw');
  afterAll(() => lab.cleanup());

  it('logs the route warning before the 75', async () => {
    await lab.host('w');
    await lab.link('w', 'eth0', 'w', 'eth0p');
    await lab.link('w', 'eth1', 'w', 'eth1p');
    await lab.addr('w', 'eth0', '198.18.77.1/24');
    await lab.addr('w', 'eth1', '198.18.88.1/24');
    const result = await lab.exec(
      'w',
      BIN,
      [
        ...['check', '--iface', 'eth0', '--verify', 'master', '--verify-timeout', '1s'],
        ...['--log-format', 'json', '--nnodes=2', '--node_rank=1', '--master_addr=198.18.88.8'],
      ],
      { reject: false, timeout: 20_000 },
    );
    expect(result.exitCode).toBe(75);
    const lines = String(result.stderr)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    const warning = lines.findIndex((line) => line.level === 40 && line.msg.includes('eth1'));
    const error = lines.findIndex((line) => line.level === 50);
    expect(warning).toBeGreaterThanOrEqual(0);
    expect(error).toBeGreaterThan(warning);
  });
});
