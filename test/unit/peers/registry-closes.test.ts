/**
 * A node whose check passed waits, before its launcher starts, until the
 * master's registry no longer answers at the rendezvous port (over
 * loopback, with the real probe service): it returns once the port refuses
 * or answers as something else (torch's store), and never while the
 * registry answers.
 */
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { MeetingPoint } from '../../../src/peers/meeting-point.js';
import { lookEveryMs, untilRegistryCloses } from '../../../src/peers/registry-closes.js';
import { type ProbeService, startProbeService } from '../../../src/probe/service.js';
import { deadlineIn } from '../../../src/reach/clock.js';
import { capturingLogger } from '../../fixtures/loopback.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
let service: ProbeService | null = null;
let store: Server | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
  store?.close();
  store = null;
});

const meeting = (port: number) =>
  ({ target: { address: '127.0.0.1', port }, token: TOKEN }) as MeetingPoint;

/** The master's service at the rendezvous port answers hellos there (peers/round.ts); `hellos` counts them. */
let hellos = 0;
const registryAt = () => {
  hellos = 0;
  return startProbeService({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    maxPending: 8,
    onHello: () => {
      hellos += 1;
    },
  });
};

/** Until the registry has answered `count` looks. */
async function answered(count: number): Promise<void> {
  while (hellos < count) await new Promise((resolve) => setTimeout(resolve, 10));
}

const wait = (port: number, deadlineMs: number) => {
  const { logger, lines } = capturingLogger('debug');
  const waiting = untilRegistryCloses({
    meeting: meeting(port),
    localAddress: '127.0.0.1',
    selfName: 'gpu-b',
    nodes: 2,
    deadline: deadlineIn(deadlineMs),
    logger,
  });
  return { waiting, lines };
};

describe('untilRegistryCloses', () => {
  it('waits while the registry answers, and returns once it has closed', async () => {
    service = await registryAt();
    const { port } = service;
    const { waiting, lines } = wait(port, 10_000);
    let returned = false;
    void waiting.then(() => {
      returned = true;
    });
    // Three looks answered, and the node still waits.
    await answered(3);
    expect(returned).toBe(false);
    const closed = performance.now();
    await service.close();
    service = null;
    await waiting;
    // At the close, not at the 10 s deadline.
    expect(performance.now() - closed).toBeLessThan(5_000);
    expect(lines.join('\n')).toMatch(/registry at 127\.0\.0\.1:\d+ has closed \(refused\)/);
  });

  it("returns at torch's store, which resets a connection whose first bytes are our hello (torch 1.13, 2.6, 2.14)", async () => {
    let reset = 0;
    store = createServer((socket) =>
      socket.once('data', () => {
        reset += 1;
        socket.resetAndDestroy();
      }),
    );
    await new Promise<void>((resolve) => store?.listen(0, '127.0.0.1', resolve));
    const { waiting, lines } = wait((store.address() as AddressInfo).port, 10_000);
    await waiting;
    // The one look reached the store, which reset it, and the node went on.
    expect(reset).toBe(1);
    expect(lines.join('\n')).toMatch(/has closed/);
  });

  it('takes a connection that no answer settles in a second for a busy registry, not for a closed one: it looks again', async () => {
    const held: Socket[] = [];
    store = createServer((socket) => {
      held.push(socket);
    });
    await new Promise<void>((resolve) => store?.listen(0, '127.0.0.1', resolve));
    const { port } = store.address() as AddressInfo;
    const { waiting, lines } = wait(port, 2_500);
    await waiting;
    for (const socket of held) socket.destroy();
    expect(held.length).toBeGreaterThanOrEqual(2);
    expect(lines.join('\n')).toMatch(
      /still answers at 127\.0\.0\.1:\d+ at the end of --verify-timeout/,
    );
  });

  it('warns at the deadline where the registry still answers, and lets the launch go on', async () => {
    service = await registryAt();
    const { waiting, lines } = wait(service.port, 500);
    await waiting;
    expect(lines.join('\n')).toMatch(
      /still answers at 127\.0\.0\.1:\d+ at the end of --verify-timeout/,
    );
  });

  it('looks every 100 ms (±50 %) in a small job, and less often in a large one: at most 4,000 looks a second at the master', () => {
    expect(lookEveryMs(2, 0.5)).toBe(100);
    expect([lookEveryMs(256, 0), lookEveryMs(256, 0.999)]).toEqual([50, expect.closeTo(149.9)]);
    expect(lookEveryMs(4_096, 0.5)).toBe(1_024);
    expect(lookEveryMs(16_384, 0.5)).toBe(4_096);
  });
});
