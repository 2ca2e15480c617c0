import type { HostFacts } from './host-facts.js';

/** Reads this host's interfaces once: os.networkInterfaces() plus /sys/class/net and the routing table. */
export async function readHostFacts(): Promise<HostFacts> {
  throw new Error('readHostFacts: not implemented yet');
}
