/**
 * The nodes that wait for the rendezvous, through the Registry without
 * sockets: past what it can hold a node is told to ask again, and in a
 * large job a held node hears the count with the next push, the last ones
 * only with their roster.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connection, elastic, register, registry } from '../../fixtures/registry.js';

describe('Registry: the nodes that wait', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tells nodes past what it can hold to ask again', () => {
    const r = elastic(60_000, 1);
    const [a, b] = [connection(), connection()];
    r.serve(register(null, 'n1', '198.18.0.1'), '198.18.0.1', a);
    r.serve(register(null, 'n2', '198.18.0.2'), '198.18.0.2', b);
    expect(a.last()).toMatchObject({ held: true });
    expect(a.finished).toBe(false);
    expect(b.lines).toEqual([expect.objectContaining({ kind: 'waiting', held: false })]);
    expect(b.finished).toBe(true);
    r.close();
  });

  it('tells a held node it waits with the next push, not on its registration, and the last ones only with their roster', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const nodes = 1_024;
    const r = registry(nodes);
    const first = connection();
    r.serve(register(1), '203.0.0.1', first);
    expect(first.lines).toEqual([]);
    vi.advanceTimersByTime(2_499);
    expect(first.lines).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(first.lines).toEqual([
      expect.objectContaining({ kind: 'waiting', held: true, registered: 1, expected: nodes }),
    ]);
    // Heard once per change, not again for the same count.
    const second = connection();
    r.serve(register(2), '203.0.0.2', second);
    vi.advanceTimersByTime(2_500);
    expect(first.lines.map((line) => line.kind === 'waiting' && line.registered)).toEqual([1, 2]);
    expect(second.lines.map((line) => line.kind === 'waiting' && line.registered)).toEqual([2]);
    const rest = Array.from({ length: nodes - 3 }, (_, i) => {
      const c = connection();
      r.serve(register(i + 3), `203.0.${(i + 3) >> 8}.${(i + 3) & 255}`, c);
      return c;
    });
    r.answer(register(0), '203.0.0.0');
    // The rosters of the first DELIVERY_BATCH are out at once; the others follow on the next turns.
    expect(rest.every((c) => c.lines.every((line) => line.kind !== 'waiting'))).toBe(true);
    r.close();
  });
});
