/**
 * The master's registry: what it answers each node, from the first
 * registration to the last, without sockets (a rank outside the job or
 * claimed twice, a node of the other round, an elastic job's completion at
 * MAX or after the last call, a node that goes or registers again); and
 * behind its service on loopback, admitting through the dial-back.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { newProofKey } from '../../../src/membership/claim-proof.js';
import {
  encodeMessage,
  MessageReader,
  type ProbeMessage,
  type Register,
} from '../../../src/probe/protocol.js';
import { startProbeService } from '../../../src/probe/service.js';
import { Registry } from '../../../src/registry/registry.js';
import {
  claimAdmission as admission,
  type Closers,
  claim,
  provingNodes,
  REGISTRY_ADDRESS as REGISTRY,
} from '../../fixtures/dial-back.js';
import { TEST_TOKEN as TOKEN } from '../../fixtures/registration.js';
import {
  connection,
  decode,
  elastic,
  membersOf,
  register,
  registry,
} from '../../fixtures/registry.js';

const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
const { nodeService, countingService } = provingNodes(closers);

describe('Registry', () => {
  it('refuses a rank outside the job, a rank claimed by a second node, and a node after the roster is complete', () => {
    const r = registry(2);
    expect(decode(r.answer(register(5), '203.0.113.15'))).toEqual([
      expect.objectContaining({
        kind: 'reject',
        reason: "rank 5 is outside the job's 2 nodes (ranks 0-1)",
      }),
    ]);
    r.answer(register(0), '203.0.113.11');
    expect(decode(r.answer(register(0, 'node9'), '203.0.113.19'))).toEqual([
      expect.objectContaining({
        kind: 'reject',
        reason:
          'rank 0 is registered already, by node0 from 203.0.113.11 (198.18.0.1): two nodes claim it',
      }),
    ]);
    r.answer(register(1), '203.0.113.12');
    // Torch puts a node that comes after completion on its wait list: late, no member.
    expect(decode(r.answer(register(null, 'late'), '203.0.113.20'))).toEqual([
      expect.objectContaining({ kind: 'roster', nodes: 2, late: true, members: [] }),
    ]);
  });

  it('tells a node of the other round to ask again', () => {
    const r = new Registry({
      round: 'publish',
      token: TOKEN,
      expected: 2,
      nodeList: [],
      restrict: null,
    });
    expect(decode(r.answer(register(0), '203.0.113.11'))).toEqual([
      expect.objectContaining({ kind: 'waiting', round: 'publish', registered: 0 }),
    ]);
  });
});

describe('Registry, held connections and elastic sizes (torch c10d: MAX at once, MIN after the last call)', () => {
  it('completes at MIN with whoever came once the last call has run out, and answers a later node as late', async () => {
    const r = elastic(150);
    const [a, b] = [connection(), connection()];
    r.serve(register(null, 'n1', '198.18.0.1'), '198.18.0.1', a);
    expect(a.last()).toMatchObject({
      kind: 'waiting',
      held: true,
      registered: 1,
      minimum: 2,
      lastCallMs: null,
    });
    r.serve(register(null, 'n2', '198.18.0.2'), '198.18.0.2', b);
    expect(b.last()).toMatchObject({ kind: 'waiting', held: true, registered: 2, expected: 4 });
    expect((b.last() as { lastCallMs: number }).lastCallMs).toBeGreaterThan(0);
    expect(a.finished).toBe(false);
    await r.completed;
    for (const held of [a, b]) {
      expect(held.finished).toBe(true);
      const roster = held.lines.find((line) => line.kind === 'roster');
      expect(roster).toMatchObject({ nodes: 2, expected: 4, late: false });
      expect(membersOf(held.lines)).toHaveLength(2);
    }
    expect(r.outcome).toEqual({ nodes: 2, expected: 4, completion: 'last call' });
    const late = connection();
    r.serve(register(null, 'n3', '198.18.0.3'), '198.18.0.3', late);
    expect(late.lines).toEqual([
      expect.objectContaining({ kind: 'roster', late: true, members: [] }),
    ]);
    r.close();
  });

  it('completes at MAX at once, the last call still running', () => {
    const r = elastic(60_000);
    const held = [1, 2, 3, 4].map((n) => {
      const c = connection();
      r.serve(register(null, `n${n}`, `198.18.0.${n}`), `198.18.0.${n}`, c);
      return c;
    });
    expect(held.every((c) => c.finished)).toBe(true);
    expect(r.outcome).toEqual({ nodes: 4, expected: 4, completion: 'all' });
    r.close();
  });

  it('forgets a node whose connection goes before completion, and clears the last call below MIN', async () => {
    const r = elastic(100);
    const [a, b] = [connection(), connection()];
    r.serve(register(null, 'n1', '198.18.0.1'), '198.18.0.1', a);
    r.serve(register(null, 'n2', '198.18.0.2'), '198.18.0.2', b);
    b.go();
    expect(r.waitingNow().toString()).toContain('"registered":1');
    expect(r.waitingNow().toString()).toContain('"lastCallMs":null');
    expect(r.outcome).toBeNull();
    const rerun = connection();
    r.serve({ ...register(null, 'n2', '198.18.0.2'), port: 50_002 }, '198.18.0.2', rerun);
    await r.completed;
    expect(membersOf(rerun.lines).map((member) => member.port)).toContain(50_002);
    r.close();
  });

  it("replaces a node's stale registration when it registers again from the same name and address (a rerun, another port)", () => {
    const r = registry(2);
    const [stale, rerun] = [connection(), connection()];
    r.serve(register(1), '203.0.113.12', stale);
    r.serve({ ...register(1), port: 51_001 }, '203.0.113.12', rerun);
    expect(stale.lines.at(-1)).toMatchObject({ kind: 'reject' });
    expect((stale.lines.at(-1) as { reason: string }).reason).toMatch(/registered again/);
    const master = membersOf(decode(r.answer(register(0), '203.0.113.11')));
    expect(master.find((member) => member.rank === 1)).toMatchObject({ port: 51_001 });
    expect(membersOf(rerun.lines)).toHaveLength(2);
    // The same name from another address is still a second node.
    expect(decode(r.answer({ ...register(1), address: '198.18.9.9' }, '203.0.113.99'))).toEqual([
      expect.objectContaining({ kind: 'reject' }),
    ]);
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

  /** A node's probe service that the test can stop, as a pod deleted takes its own away. */
  const stoppableService = async (address: string, key: string) => {
    const service = await startProbeService({
      host: address,
      port: 0,
      token: TOKEN,
      maxPending: 8,
      proofKey: key,
    });
    closers.push(() => service.close());
    return service;
  };

  it('takes a pod made anew (same name and rank, new address) once its old registration no longer answers, releasing the old one', async () => {
    const { registry, port } = await registryService();
    const oldKey = newProofKey();
    const old = await stoppableService('127.0.0.3', oldKey);
    const first = await registerFrom('127.0.0.3', port, claim('127.0.0.3', old.port, oldKey));
    expect(first.first).toMatchObject({ kind: 'waiting', registered: 1 });
    // The pod is deleted: its service is gone; the master's held connection is not closed (half open).
    await old.close();
    const newKey = newProofKey();
    const made = await stoppableService('127.0.0.4', newKey);
    const again = await registerFrom('127.0.0.4', port, claim('127.0.0.4', made.port, newKey));
    expect(again.first).toMatchObject({ kind: 'waiting', registered: 1, missing: ['node-a'] });
    expect(registry.waitingNow().toString()).toContain('"registered":1');
  });

  it('answers a pod made anew after the roster is final as late, as any node after completion, once its old registration no longer answers', async () => {
    const { registry, port } = await registryService();
    const aKey = newProofKey();
    const a = await stoppableService('127.0.0.5', aKey);
    const oldKey = newProofKey();
    const old = await stoppableService('127.0.0.3', oldKey);
    await registerFrom('127.0.0.3', port, claim('127.0.0.3', old.port, oldKey));
    const master = await registerFrom('127.0.0.5', port, {
      ...claim('127.0.0.5', a.port, aKey),
      node: { name: 'node-a', rank: 0 },
    });
    expect(master.first).toMatchObject({ kind: 'roster', late: false });
    expect(registry.outcome).toMatchObject({ completion: 'all' });
    // node-b's pod is deleted and made anew with another address.
    await old.close();
    const newKey = newProofKey();
    const made = await stoppableService('127.0.0.4', newKey);
    const again = await registerFrom('127.0.0.4', port, claim('127.0.0.4', made.port, newKey));
    expect(again.first).toMatchObject({ kind: 'roster', late: true, members: [] });
  });

  it('refuses a second node under the same name while the first still answers: two nodes claim it', async () => {
    const { port } = await registryService();
    const key = newProofKey();
    const live = await stoppableService('127.0.0.3', key);
    await registerFrom('127.0.0.3', port, claim('127.0.0.3', live.port, key));
    const twinKey = newProofKey();
    const twin = await stoppableService('127.0.0.4', twinKey);
    const refused = await registerFrom('127.0.0.4', port, claim('127.0.0.4', twin.port, twinKey));
    expect(refused.first).toMatchObject({
      kind: 'reject',
      reason: expect.stringMatching(
        /^rank 1 is registered already, by node-b from 127\.0\.0\.3 \(127\.0\.0\.3\), which still answers there: two nodes claim it$/,
      ),
    });
  });
});
