import { lookup } from 'node:dns/promises';
import { UnresolvableMasterError } from '../errors.js';
import { familyOf } from './ip-address.js';

/** getaddrinfo failures in words, for the one-line error. */
const LOOKUP_ERRORS: Record<string, string> = {
  ENOTFOUND: 'no such name in /etc/hosts or DNS',
  EAI_AGAIN: 'temporary failure: DNS did not answer',
  ENODATA: 'the name has no address records',
  EAI_FAIL: 'DNS failed permanently',
};

/**
 * Every address the master's name resolves to. IP literals come back as
 * given (an IPv6 literal with or without brackets). Names go through
 * getaddrinfo (dns.lookup, all: true), which reads /etc/hosts and
 * nsswitch.conf as torch's c10d sockets do (getaddrinfo); verbatim keeps the
 * resolver's order. UnresolvableMasterError (exit 68) when none.
 */
export async function resolveMaster(host: string): Promise<string[]> {
  const literal = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  // familyOf, not net.isIP: that compiles Node's IPv6 regex, a cost at every start (ip-address.ts).
  if (familyOf(literal) !== null) return [literal];
  if (host.trim() === '')
    throw new UnresolvableMasterError(
      'the master address is empty; set --master-addr or MASTER_ADDR',
    );
  let answers: { address: string }[];
  try {
    answers = await lookup(host, { all: true, verbatim: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    const meaning = LOOKUP_ERRORS[code];
    throw new UnresolvableMasterError(
      `master '${host}' does not resolve (${code}${meaning ? `: ${meaning}` : ''}); check the name, /etc/hosts and DNS on this node`,
    );
  }
  const addresses = [...new Set(answers.map((answer) => answer.address))];
  if (addresses.length === 0) {
    throw new UnresolvableMasterError(
      `master '${host}' resolves to no address; check /etc/hosts and DNS on this node`,
    );
  }
  return addresses;
}

/** What a name resolves to, in getaddrinfo's order; none when it does not (or for an empty name). */
export async function addressesOf(name: string): Promise<string[]> {
  if (name === '') return [];
  return resolveMaster(name).catch(() => []);
}
