/**
 * The probe's dial over real loopback sockets: it reaches a node's
 * service and learns the source address the service saw, and tells
 * another job, a refusal and a port that does not speak the probe apart.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { dialOnce } from '../../../src/probe/dial.js';
import type { ProbeService } from '../../../src/probe/service.js';
import {
  LISTENER_HOST as HOST,
  listenOnLoopback,
  OTHER_TOKEN,
  LISTENER_TOKEN as TOKEN,
} from '../../fixtures/probe-listener.js';

let port = 0;
let listener: ProbeService | null = null;

async function listen(): Promise<void> {
  listener = (await listenOnLoopback()).service;
  port = listener.port;
}

afterEach(async () => {
  await listener?.close();
  listener = null;
});

describe('probe dial', () => {
  it('reaches a listener and learns the source address it saw', async () => {
    await listen();
    const outcome = await dialOnce({
      target: { address: HOST, port },
      localAddress: HOST,
      token: TOKEN,
      selfName: 'node2',
      attemptMs: 2_000,
    });
    expect(outcome).toEqual({ ok: true, seen: HOST });
  });

  it('tells another job, a refusal and a port that does not speak the probe apart', async () => {
    await listen();
    const dial = (token: string, target = port) =>
      dialOnce({
        target: { address: HOST, port: target },
        localAddress: HOST,
        token,
        selfName: 'n',
        attemptMs: 1_000,
      });
    expect(await dial(OTHER_TOKEN)).toMatchObject({ ok: false, error: 'other job' });
    await listener?.close();
    listener = null;
    expect(await dial(TOKEN)).toMatchObject({
      ok: false,
      error: 'refused',
      detail: 'ECONNREFUSED',
    });

    const mute = createServer((socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n'));
    await new Promise<void>((resolve) => mute.listen(port, HOST, resolve));
    try {
      expect(await dial(TOKEN)).toMatchObject({ ok: false, error: 'no handshake' });
    } finally {
      mute.close();
    }
  });
});
