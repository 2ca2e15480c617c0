import type { HostFacts, RouteAnswer } from './host-facts.js';

/**
 * The kernel's route to each address. live: ask this host (ip -j route get,
 * else /proc); otherwise a longest-prefix match over facts.routes (replay).
 */
export async function routeTo(
  _addresses: readonly string[],
  _facts: HostFacts,
  _live: boolean,
): Promise<RouteAnswer[]> {
  throw new Error('routeTo: not implemented yet');
}
