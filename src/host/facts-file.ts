import type { HostFacts } from './host-facts.js';

/** Reads a facts snapshot (the `facts` of explain --json, or a bare HostFacts). */
export function readFactsFile(_path: string): HostFacts {
  throw new Error('readFactsFile: not implemented yet');
}
