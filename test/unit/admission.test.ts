/**
 * What a registration must prove (issue 21, item 3), on loopback with real
 * sockets (Linux routes all of 127.0.0.0/8 to lo, so every "node" has an
 * address of its own): a claim from its own address is admitted at once; a
 * claim from elsewhere is admitted once the claimed address and port answer
 * the registry's dial-back with the registering node's proof, and is no
 * member when someone else answers there or nothing does.
 */
import { connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Admission } from '../../src/membership/admission.js';
import { newProofKey } from '../../src/membership/claim-proof.js';
import {
  encodeMessage,
  MessageReader,
  type ProbeMessage,
  type Register,
} from '../../src/probe/protocol.js';
import { proofMac, startProbeService } from '../../src/probe/service.js';
import { Registry } from '../../src/registry/registry.js';
import { registration } from '../fixtures/registration.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
const REGISTRY = '127.0.0.1';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function claim(address: string, port: number, proofKey: string): Register {
  return registration({ token: TOKEN, address, port, proofKey });
}

/** A node's ephemeral service at `address`, answering prove under `key`. */
async function nodeService(address: string, key: string): Promise<number> {
  const service = await startProbeService({
    host: address,
    port: 0,
    token: TOKEN,
    maxPending: 8,
    proofKey: key,
  });
  closers.push(() => service.close());
  return service.port;
}

/** A stand-in for a node's service that counts the proves it answers, and may hold them. */
async function countingService(address: string, key: string, hold?: Promise<void>) {
  const proves: string[] = [];
  const server: Server = createServer((socket) => {
    const reader = new MessageReader();
    socket.on('data', async (chunk) => {
      const [first] = reader.push(chunk);
      if (first?.kind !== 'message' || first.message.kind !== 'prove') return socket.destroy();
      proves.push(first.message.nonce);
      await hold;
      socket.end(
        encodeMessage({
          kind: 'proof',
          token: TOKEN,
          mac: proofMac(key, TOKEN, first.message.nonce),
        }),
      );
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as { port: number }).port, proves };
}

const admission = (log: { proven: string[]; refused: string[] } = { proven: [], refused: [] }) =>
  new Admission({
    token: TOKEN,
    localAddress: REGISTRY,
    munge: null,
    onProven: (request, seen) => log.proven.push(`${request.node.name} ${seen}`),
    onRefused: (reason) => log.refused.push(reason),
  });

describe('Admission of a claimed address', () => {
  it('admits a registration from the address it claims at once, with no turn of the loop', () => {
    expect(admission().check(claim('127.0.0.2', 40_000, newProofKey()), '127.0.0.2')).toEqual({
      ok: true,
    });
  });

  it('admits one from another address once its service there proves the claim, and asks only once', async () => {
    const key = newProofKey();
    const service = await countingService('127.0.0.3', key);
    const log = { proven: [] as string[], refused: [] as string[] };
    const check = admission(log);
    const request = claim('127.0.0.3', service.port, key);
    const verdict = check.check(request, '127.0.0.2');
    expect(verdict).toBeInstanceOf(Promise);
    expect(await verdict).toEqual({ ok: true });
    // The node asks again with the same bytes (a poll): no second dial-back.
    expect(await check.check(request, '127.0.0.2')).toEqual({ ok: true });
    expect(service.proves).toHaveLength(1);
    expect(log).toEqual({ proven: ['node-b 127.0.0.2'], refused: [] });
  });

  it("refuses a claim of another node's address and port, which that node's service answers under its own key", async () => {
    const port = await nodeService('127.0.0.3', newProofKey());
    const log = { proven: [] as string[], refused: [] as string[] };
    const verdict = await admission(log).check(
      claim('127.0.0.3', port, newProofKey()),
      '127.0.0.9',
    );
    const reason = `node-b (rank 1) registered from 127.0.0.9 claiming 127.0.0.3:${port}, where something else answers (a proof under another key): not a member; that address and port are another's, so check which host holds 127.0.0.3`;
    expect(verdict).toEqual({ ok: false, reason });
    expect(log.refused).toEqual([reason]);
  });

  it('refuses a claim where nothing listens (an absent node), naming the port range to check', async () => {
    // A port that was just free: nothing of the job listens there.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.4', () => {
        const { port: free } = server.address() as { port: number };
        server.close(() => resolve(free));
      });
    });
    expect(await admission().check(claim('127.0.0.4', port, newProofKey()), '127.0.0.9')).toEqual({
      ok: false,
      reason: `node-b (rank 1) registered from 127.0.0.9 claiming 127.0.0.4:${port}, which the master cannot reach to prove it (refused, ECONNREFUSED): not a member; check that 127.0.0.4 is that node's and that a firewall there lets the master reach its ephemeral ports (net.ipv4.ip_local_port_range 32768-60999 on node-b)`,
    });
  });
});

describe('the registry behind its service, with admission', () => {
  const registryService = async () => {
    const registry = new Registry({
      round: 'register',
      token: TOKEN,
      expected: 2,
      nodeList: ['node-a', 'node-b'],
      restrict: null,
      admission: admission(),
    });
    const service = await startProbeService({
      host: REGISTRY,
      port: 0,
      token: TOKEN,
      maxPending: 8,
      registry,
    });
    closers.push(() => service.close());
    closers.push(() => registry.close());
    return { registry, port: service.port };
  };

  /** Registers from `from` and returns the first line the registry says, and the socket. */
  const registerFrom = (from: string, port: number, request: Register) =>
    new Promise<{ first: ProbeMessage; close: () => void }>((resolve, reject) => {
      const socket = connect({ host: REGISTRY, port, localAddress: from }, () => {
        const { v: _v, ...outgoing } = request;
        socket.write(encodeMessage(outgoing));
      });
      const reader = new MessageReader();
      socket.on('data', (chunk) => {
        const [first] = reader.push(chunk);
        if (first?.kind === 'message')
          resolve({ first: first.message, close: () => socket.destroy() });
      });
      socket.on('error', reject);
      closers.push(() => {
        socket.destroy();
      });
    });

  it('counts a proven node from its management address, and not a stranger claiming its address', async () => {
    const { registry, port } = await registryService();
    const key = newProofKey();
    const nodeB = await nodeService('127.0.0.3', key);
    const stranger = await registerFrom(
      '127.0.0.9',
      port,
      claim('127.0.0.3', nodeB, newProofKey()),
    );
    expect(stranger.first).toMatchObject({
      kind: 'reject',
      reason: expect.stringMatching(
        /^node-b \(rank 1\) registered from 127\.0\.0\.9 claiming 127\.0\.0\.3:\d+, where something else answers/,
      ),
    });
    expect(registry.waitingNow().toString()).toContain('"registered":0');
    const real = await registerFrom('127.0.0.2', port, claim('127.0.0.3', nodeB, key));
    expect(real.first).toMatchObject({ kind: 'waiting', registered: 1, missing: ['node-a'] });
  });

  it('leaves nothing behind of a node that goes while its claim is being proved', async () => {
    const { registry, port } = await registryService();
    const key = newProofKey();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const service = await countingService('127.0.0.3', key, held);
    const socket = connect({ host: REGISTRY, port, localAddress: '127.0.0.2' }, () => {
      const { v: _v, ...outgoing } = claim('127.0.0.3', service.port, key);
      socket.write(encodeMessage(outgoing));
    });
    socket.on('error', () => {});
    // The dial-back has arrived: the node goes before it is answered.
    while (service.proves.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // Killed: a reset, which the registry's service sees at once (a FIN only at its next write).
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.resetAndDestroy();
    await closed;
    release();
    // The proof arrives after the node went; a second node from its own address sees itself alone.
    const other = await registerFrom('127.0.0.5', port, {
      ...claim('127.0.0.5', 40_000, newProofKey()),
      node: { name: 'node-a', rank: 0 },
    });
    expect(other.first).toMatchObject({ kind: 'waiting', registered: 1, missing: ['node-b'] });
    expect(registry.outcome).toBeNull();
  });
});
