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
 * Waiting for a name that may not resolve yet: in a Kubernetes job the
 * master pod's DNS record appears once that pod runs, and a worker often
 * starts first; torch's store client would retry, so the check does too.
 */
export interface NameWait {
  ms: number;
  /** getaddrinfo's codes worth another try (EAI_AGAIN always; ENOTFOUND where names come late). */
  retry: readonly string[];
  pollMs?: number;
  /** Said once, at the first failure that is waited out. */
  onWait: (code: string) => void;
}

/**
 * Every address the master's name resolves to. IP literals come back as
 * given (an IPv6 literal with or without brackets). Names go through
 * getaddrinfo (dns.lookup, all: true), which reads /etc/hosts and
 * nsswitch.conf as torch's c10d sockets do (getaddrinfo); verbatim keeps the
 * resolver's order. UnresolvableMasterError (exit 68) when none, after
 * `wait` where it is given and the failure is one it retries.
 */
export async function resolveMaster(host: string, wait?: NameWait): Promise<string[]> {
  const literal = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  // familyOf, not net.isIP: that compiles Node's IPv6 regex, a cost at every start (ip-address.ts).
  if (familyOf(literal) !== null) return [literal];
  if (host.trim() === '')
    throw new UnresolvableMasterError(
      'the master address is empty; set --master-addr or MASTER_ADDR',
    );
  const started = performance.now();
  let answers: { address: string }[];
  for (let first = true; ; first = false) {
    try {
      answers = await lookup(host, { all: true, verbatim: true });
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      const waited = performance.now() - started;
      if (wait?.retry.includes(code) && waited < wait.ms) {
        if (first) wait.onWait(code);
        const pollMs = wait.pollMs ?? 500;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, wait.ms - waited)));
        continue;
      }
      const meaning = LOOKUP_ERRORS[code];
      const after = first ? '' : ` after ${Math.round(waited / 1000)} s of retries`;
      throw new UnresolvableMasterError(
        `master '${host}' does not resolve (${code}${meaning ? `: ${meaning}` : ''})${after}; check the name, /etc/hosts and DNS on this node`,
      );
    }
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
