/** Every address the master's name resolves to (dns.lookup, all: true); UnresolvableMasterError if none. */
export async function resolveMaster(_host: string): Promise<string[]> {
  throw new Error('resolveMaster: not implemented yet');
}
