/**
 * The probe service over real loopback sockets: what a stranger can do to
 * it (garbage, an overlong line, silence, too many connections, another
 * job's token) costs it a connection, never itself; a stream is counted
 * within its window and answered.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { streamTo } from '../../../src/peers/bandwidth.js';
import { MAX_MESSAGE_BYTES, PROTOCOL_VERSION } from '../../../src/probe/protocol.js';
import type { ProbeService } from '../../../src/probe/service.js';
import {
  LISTENER_HOST as HOST,
  type LoopbackListener,
  listenOnLoopback,
  OTHER_TOKEN,
  LISTENER_TOKEN as TOKEN,
} from '../../fixtures/probe-listener.js';

let port = 0;
let listener: ProbeService | null = null;
let hellos: LoopbackListener['hellos'] = [];
let streams: LoopbackListener['streams'] = [];

async function listen(options: Parameters<typeof listenOnLoopback>[0] = {}): Promise<void> {
  const heard = await listenOnLoopback(options);
  listener = heard.service;
  port = heard.service.port;
  hellos = heard.hellos;
  streams = heard.streams;
}

/** Connects, writes, and reports how the listener ended the connection and what it said. */
function exchange(payload: Buffer | null): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket: Socket = connect({ host: HOST, port });
    let answer = '';
    const guard = setTimeout(() => reject(new Error('listener kept the connection open')), 3_000);
    socket.on('connect', () => {
      if (payload) socket.write(payload);
    });
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(guard);
      resolve({ answer, closedAfterMs: performance.now() - started });
    });
  });
}

const hello = (token: string) =>
  Buffer.from(
    `${JSON.stringify({ v: PROTOCOL_VERSION, kind: 'hello', token, peer: 'node2', address: HOST })}\n`,
  );

afterEach(async () => {
  await listener?.close();
  listener = null;
});

describe('probe service', () => {
  it('welcomes a hello of its job, says which source it saw, and reports it', async () => {
    await listen();
    const { answer } = await exchange(hello(TOKEN));
    expect(JSON.parse(answer)).toEqual({
      v: PROTOCOL_VERSION,
      kind: 'welcome',
      token: TOKEN,
      seen: HOST,
    });
    expect(hellos).toEqual([
      { hello: expect.objectContaining({ peer: 'node2', address: HOST }), seen: HOST },
    ]);
  });

  it("hangs up on another release's probe message, and says which version it spoke", async () => {
    const foreign: [number, string][] = [];
    await listen({ onForeignVersion: (version, seen) => foreign.push([version, seen]) });
    const older = JSON.parse(hello(TOKEN).toString()) as Record<string, unknown>;
    const { answer } = await exchange(
      Buffer.from(`${JSON.stringify({ ...older, v: PROTOCOL_VERSION - 1 })}\n`),
    );
    expect(answer).toBe('');
    expect(foreign).toEqual([[PROTOCOL_VERSION - 1, HOST]]);
    expect(hellos).toEqual([]);
  });

  it("rejects another job's token without counting it", async () => {
    await listen();
    const { answer } = await exchange(hello(OTHER_TOKEN));
    expect(JSON.parse(answer)).toEqual({ v: PROTOCOL_VERSION, kind: 'reject', reason: 'token' });
    expect(hellos).toEqual([]);
  });

  it('hangs up on garbage, an overlong line and silence, and still answers afterwards', async () => {
    await listen({ firstLineMs: 300 });
    const garbage = await exchange(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    const overlong = await exchange(Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x41));
    const silent = await exchange(null);
    const aWelcomeAsHttp = await exchange(
      Buffer.from(
        `${JSON.stringify({ v: PROTOCOL_VERSION, kind: 'welcome', token: TOKEN, seen: HOST })}\n`,
      ),
    );
    for (const dropped of [garbage, overlong, aWelcomeAsHttp]) expect(dropped.answer).toBe('');
    expect(silent.answer).toBe('');
    expect(silent.closedAfterMs).toBeGreaterThanOrEqual(250);
    expect(JSON.parse((await exchange(hello(TOKEN))).answer)).toMatchObject({ kind: 'welcome' });
    expect(hellos).toHaveLength(1);
  });

  it('pushes the oldest silent connection out for a newcomer, which it still welcomes', async () => {
    await listen({ maxPending: 2, silentAfterMs: 0, firstLineMs: 2_000 });
    const silent = [connect({ host: HOST, port }), connect({ host: HOST, port })];
    const closed = silent.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    for (const socket of silent) socket.on('error', () => {});
    await Promise.all(
      silent.map((socket) => new Promise((resolve) => socket.once('connect', resolve))),
    );
    // Both are pending before the hello arrives: the service has accepted them once it pushes one out.
    const welcomed = await exchange(hello(TOKEN));
    expect(JSON.parse(welcomed.answer)).toMatchObject({ kind: 'welcome' });
    await closed[0];
    expect(silent[1]?.destroyed).toBe(false);
    for (const socket of silent) socket.destroy();
    await Promise.all(closed);
  });

  it('takes a burst of fresh connections past its bound, up to eight times it, pushing none out', async () => {
    await listen({ maxPending: 2, silentAfterMs: 60_000, firstLineMs: 2_000 });
    const burst = Array.from({ length: 16 }, () => connect({ host: HOST, port }));
    const closed = burst.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    for (const socket of burst) socket.on('error', () => {});
    await Promise.all(
      burst.map((socket) => new Promise((resolve) => socket.once('connect', resolve))),
    );
    const welcomed = await exchange(hello(TOKEN));
    expect(JSON.parse(welcomed.answer)).toMatchObject({ kind: 'welcome' });
    // The hello comes to 16 pending, eight times the bound: it pushes the oldest out, and only it.
    await closed[0];
    expect(burst.slice(1).every((socket) => !socket.destroyed)).toBe(true);
    for (const socket of burst) socket.destroy();
    await Promise.all(closed);
  });

  it('gives a trickle of bytes no longer than silence for its first line', async () => {
    await listen({ firstLineMs: 400 });
    const started = performance.now();
    const socket = connect({ host: HOST, port });
    socket.on('error', () => {});
    const trickle = setInterval(() => socket.write('x'), 50);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(trickle);
    // Cut at its first-line limit, not by the bytes it kept sending.
    expect(performance.now() - started).toBeGreaterThanOrEqual(350);
  });

  it('counts a stream for its window, answers with the count, and drops the rest', async () => {
    await listen({ windowMs: 300 });
    const outcome = await streamTo({
      target: { address: HOST, port },
      localAddress: HOST,
      token: TOKEN,
      selfName: 'node2',
      windowMs: 300,
      attemptMs: 2_000,
    });
    expect(outcome).toMatchObject({ ok: true });
    const { bytes, ms, mbps } = outcome as { bytes: number; ms: number; mbps: number };
    // The window's timer fires at 300 ms, which the receiver's clock may read a millisecond short.
    expect(ms).toBeGreaterThanOrEqual(299);
    expect(mbps).toBeCloseTo((bytes * 8) / (ms * 1_000));
    // Counted once the sender, having read the count, hung up.
    await vi.waitFor(() => expect(streams).toEqual([{ peer: 'node2', bytes, ms }]));
  });

  it("does not count another job's stream", async () => {
    await listen();
    const outcome = await streamTo({
      target: { address: HOST, port },
      localAddress: HOST,
      token: OTHER_TOKEN,
      selfName: 'node2',
      windowMs: 200,
      attemptMs: 1_000,
    });
    expect(outcome).toMatchObject({ ok: false, error: 'no handshake' });
    expect(streams).toEqual([]);
  });

  it('closes its connections when the check ends', async () => {
    await listen({ firstLineMs: 10_000 });
    const closed = exchange(null);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await listener?.close();
    listener = null;
    // Closed by the listener's close, not by the 10 s first-line limit that would close it otherwise.
    expect((await closed).closedAfterMs).toBeLessThan(10_000);
  });
});
