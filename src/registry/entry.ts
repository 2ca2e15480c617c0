/**
 * One registration as the registry keeps it, and what tells two apart: the
 * registrations (registrations.ts), the --peers matching
 * (peer-matching.ts), the waiting room (waiting-room.ts) and the final
 * answers (final-answers.ts) all hold the same entries.
 */
import type { NodeIdentity, Publish, Register } from '../probe/protocol.js';
import type { RegistryConnection } from '../probe/service.js';

export type Round = 'publish' | 'register';
export type RequestOf<R extends Round> = R extends 'publish' ? Publish : Register;

export interface Entry<R extends Round> {
  /** Its rank where it has one, else its name and the address it came from. */
  key: string;
  node: NodeIdentity;
  seen: string;
  request: RequestOf<R>;
  /** The node's connection while the registry holds it. */
  connection: RegistryConnection | null;
  /** The last `waiting` written on that connection. */
  told: Buffer | null;
}

/**
 * The same node asking again or rerun (a requeue, a pod restart): its name,
 * the address it came from and, for a registration, the address it
 * registered; its port may differ, a rerun listening anew.
 */
export function sameMachine(
  held: Entry<Round>,
  request: Publish | Register,
  seen: string,
): boolean {
  if (held.node.name !== request.node.name || held.seen !== seen) return false;
  return (
    held.request.kind !== 'register' ||
    request.kind !== 'register' ||
    held.request.address === request.address
  );
}

/** The registration the roster was made of, not a rerun's. */
export function sameRegistration(held: Entry<Round>, request: Publish | Register): boolean {
  return (
    held.request.kind !== 'register' ||
    request.kind !== 'register' ||
    held.request.port === request.port
  );
}

/** The addresses a request says are the node's: the one it registered, or every one it published. */
export function ownAddresses(request: Publish | Register): string[] {
  return request.kind === 'register'
    ? [request.address]
    : request.networks.map((network) => network.address);
}

/** A node's name without its domain: node07 and node07.cluster are one node. */
export function shortName(name: string): string {
  return name.split('.')[0] ?? name;
}
