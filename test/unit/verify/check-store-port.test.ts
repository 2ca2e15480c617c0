/**
 * The master checks over real loopback sockets: the store port bind on the
 * master node, and the worker's connect with backoff and progress lines.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { checkStorePort } from '../../../src/verify/check-store-port.js';
import { freePort, portHolder } from '../../fixtures/loopback.js';

const held = portHolder();
afterEach(() => held.closeAll());

describe('checkStorePort', () => {
  it('binds and releases a free port, so torchrun can take it next', async () => {
    const port = await freePort();
    expect(await checkStorePort('127.0.0.1', port, 'ipv4')).toEqual({ ok: true });
    await held.hold('127.0.0.1', port);
  });

  it("names the endpoint's address when the port is held there", async () => {
    const port = await freePort();
    await held.hold('127.0.0.1', port);
    expect(await checkStorePort('127.0.0.1', port, 'ipv4')).toEqual({
      ok: false,
      address: '127.0.0.1',
      error: 'port in use',
      detail: 'EADDRINUSE',
    });
  });

  it("fails on the wildcard, as torchrun's store would, when another address holds the port", async () => {
    const port = await freePort();
    await held.hold('127.0.0.2', port);
    expect(await checkStorePort('127.0.0.1', port, 'ipv4')).toMatchObject({
      ok: false,
      address: '0.0.0.0',
      error: 'port in use',
    });
  });
});
