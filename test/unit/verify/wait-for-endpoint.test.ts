/**
 * The master checks over real loopback sockets: the store port bind on the
 * master node, and the worker's connect with backoff and progress lines.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { deadlineIn } from '../../../src/reach/clock.js';
import { waitForEndpoint, waitForStore } from '../../../src/verify/wait-for-endpoint.js';
import { capturingLogger, freePort, portHolder } from '../../fixtures/loopback.js';

const held = portHolder();
afterEach(() => held.closeAll());

describe('waitForEndpoint', () => {
  it('retries a refusing endpoint until it listens, logging progress while it waits', async () => {
    const port = await freePort();
    const { logger, lines } = capturingLogger();
    setTimeout(() => void held.hold('127.0.0.1', port), 700);
    const waited = await waitForEndpoint({
      target: { address: '127.0.0.1', port },
      localAddress: '127.0.0.1',
      interfaceName: 'lo',
      deadline: deadlineIn(5_000),
      logger,
      progressEveryMs: 200,
    });
    expect(waited.outcome).toEqual({ ok: true });
    expect(waited.attempts).toBeGreaterThan(1);
    expect(waited.elapsedMs).toBeGreaterThanOrEqual(600);
    expect(lines[0]).toMatch(
      new RegExp(
        `^waiting for 127\\.0\\.0\\.1:${port} via lo, \\d+s of 5s; last attempt: refused \\(ECONNREFUSED\\)$`,
      ),
    );
  });

  it('gives up at the deadline with the last error', async () => {
    const port = await freePort();
    const { logger } = capturingLogger();
    const waited = await waitForEndpoint({
      target: { address: '127.0.0.1', port },
      localAddress: '127.0.0.1',
      interfaceName: 'lo',
      deadline: deadlineIn(800),
      logger,
    });
    expect(waited.outcome).toEqual({ ok: false, error: 'refused', detail: 'ECONNREFUSED' });
    // It tried until the deadline (how far the last attempt may run past it is attemptBudgetMs's, reach/backoff.test.ts).
    expect(waited.elapsedMs).toBeGreaterThanOrEqual(800);
    expect(waited.attempts).toBeGreaterThan(1);
  });

  it('stops at once when the source address is not on this host', async () => {
    const waited = await waitForEndpoint({
      target: { address: '127.0.0.1', port: 9 },
      localAddress: '198.18.99.99',
      interfaceName: 'ens3f0',
      deadline: deadlineIn(5_000),
      logger: capturingLogger().logger,
    });
    expect(waited).toMatchObject({
      attempts: 1,
      outcome: { ok: false, error: 'address not available' },
    });
  });
});

describe('waitForStore: the master’s addresses in turn, as torch’s TCPStore client', () => {
  it('passes on the second address when nothing listens on the first', async () => {
    const port = await freePort();
    await held.hold('127.0.0.1', port);
    const waited = await waitForStore({
      addresses: ['127.0.0.2', '127.0.0.1'],
      port,
      interfaceName: 'lo',
      deadline: deadlineIn(5_000),
      logger: capturingLogger().logger,
    });
    expect(waited).toMatchObject({ outcome: { ok: true }, address: '127.0.0.1', attempts: 2 });
  });

  it('names every address that failed, the last one tried first', async () => {
    const port = await freePort();
    const waited = await waitForStore({
      addresses: ['127.0.0.2', '127.0.0.3'],
      port,
      interfaceName: 'lo',
      deadline: deadlineIn(600),
      logger: capturingLogger().logger,
    });
    expect(waited.address).toBe('127.0.0.3');
    expect(waited.outcome).toEqual({
      ok: false,
      error: 'refused',
      detail: 'ECONNREFUSED; before it 127.0.0.2: refused (ECONNREFUSED)',
    });
  });
});
