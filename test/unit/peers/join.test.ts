/**
 * A node's wait at the master's registry over loopback: what its progress
 * lines say while nodes are missing or the service is not up (SPEC
 * "Verification": `3 of 4 nodes registered, missing: node04`).
 */

import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { joinRegistry } from '../../../src/peers/join.js';
import type { Register } from '../../../src/probe/protocol.js';
import { type ProbeService, startProbeService } from '../../../src/probe/service.js';
import { deadlineIn } from '../../../src/reach/clock.js';
import { Registry } from '../../../src/registry/registry.js';
import { capturingLogger } from '../../fixtures/loopback.js';
import { registration } from '../../fixtures/registration.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
let service: ProbeService | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
});

const request = (rank: number): Register =>
  registration({
    token: TOKEN,
    node: { name: `gpu-${rank}`, rank },
    interface: 'lo',
    address: '127.0.0.1',
    port: 40_000 + rank,
  });

describe('joinRegistry', () => {
  it('names who is missing while it waits, and at the end', async () => {
    const registry = new Registry({
      round: 'register',
      token: TOKEN,
      expected: 4,
      nodeList: ['gpu-a', 'gpu-b', 'gpu-c', 'gpu-d'],
      restrict: null,
    });
    service = await startProbeService({
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      maxPending: 8,
      registry,
    });
    registry.answer(request(1), '127.0.0.9');
    registry.answer(request(2), '127.0.0.9');
    const { logger, lines } = capturingLogger();
    const outcome = await joinRegistry({
      target: { address: '127.0.0.1', port: service.port },
      masterName: 'gpu-a',
      request: request(0),
      token: TOKEN,
      deadline: deadlineIn(500),
      logger,
      attemptMs: 1_000,
      nodes: 4,
      progressEveryMs: 150,
    });
    expect(outcome).toMatchObject({
      ok: false,
      error: 'not registered',
      detail: '3 of 4 nodes registered, missing: gpu-d',
    });
    expect(lines[0]).toBe(
      `3 of 4 nodes registered, missing: gpu-d; the master's probe service (gpu-a at 127.0.0.1:${service.port}), 0s of 500ms`,
    );
  });

  it('says how the last attempt ended while the service is not up', async () => {
    service = await startProbeService({
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      maxPending: 8,
    });
    const { port } = service;
    await service.close();
    service = null;
    const { logger, lines } = capturingLogger();
    const outcome = await joinRegistry({
      target: { address: '127.0.0.1', port },
      masterName: 'gpu-a',
      request: request(1),
      token: TOKEN,
      deadline: deadlineIn(400),
      logger,
      attemptMs: 1_000,
      nodes: 4,
      progressEveryMs: 150,
    });
    expect(outcome).toMatchObject({
      ok: false,
      error: 'refused',
      detail: 'ECONNREFUSED',
      waiting: null,
    });
    expect(lines[0]).toBe(
      `waiting for the master's probe service (gpu-a at 127.0.0.1:${port}), 0s of 400ms; last attempt: refused (ECONNREFUSED)`,
    );
  });

  it('waits on the connection the registry holds and gets the roster pushed when the last node comes, no polling', async () => {
    const registry = new Registry({
      round: 'register',
      token: TOKEN,
      expected: 2,
      nodeList: [],
      restrict: null,
    });
    service = await startProbeService({
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      maxPending: 8,
      registry,
    });
    const { logger } = capturingLogger();
    const joining = joinRegistry({
      target: { address: '127.0.0.1', port: service.port },
      masterName: 'gpu-a',
      request: request(1),
      token: TOKEN,
      deadline: deadlineIn(20_000),
      logger,
      attemptMs: 1_000,
      nodes: 2,
    });
    // Held, the first ask's attempt limit (1 s) does not end it; the roster comes when node 0 does.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    registry.answer(request(0), '127.0.0.1');
    const outcome = await joining;
    expect(outcome).toMatchObject({ ok: true, kind: 'roster' });
    registry.close();
  });

  it("gives up in a few asks when the port takes connections but never answers as the probe (torch's store of an elastic job that runs)", async () => {
    let asks = 0;
    const store = createServer((socket) => {
      asks += 1;
      socket.on('data', () => socket.destroy());
    });
    await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
    const { port } = store.address() as { port: number };
    try {
      const { logger } = capturingLogger();
      const outcome = await joinRegistry({
        target: { address: '127.0.0.1', port },
        masterName: 'gpu-a',
        request: request(1),
        token: TOKEN,
        deadline: deadlineIn(20_000),
        logger,
        attemptMs: 1_000,
        nodes: 4,
        foreignLimit: 3,
      });
      expect(outcome).toMatchObject({ ok: false, foreign: true, error: 'no handshake' });
      // The third ask that met no probe ended the wait, long before the 20 s deadline.
      expect(asks).toBe(3);
    } finally {
      await new Promise((resolve) => store.close(resolve));
    }
  });
});
