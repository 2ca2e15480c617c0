/**
 * Handing the rendezvous port over, on a node that does not host the
 * store: its check has passed, but the master's registry still answers at
 * the port torch's store will take, until the master's own check ends (its
 * mesh, every roster delivered). A launcher exec'd now could reach the
 * registry instead of the store, and torch's TCPStore client takes a
 * connection closed in its handshake as fatal. So the node waits, looking
 * at the port as it joined it, until the registry no longer answers there:
 * a refusal (the master's registry has closed), or a connection closed
 * or answered as no probe does (torch's store has bound the port: the
 * TCPStore of torch 1.13, 2.6 and 2.14 resets a connection whose first
 * bytes are our hello within a millisecond, tried here). A look that no answer settles in
 * its time proves neither: a busy master's registry answers late, so the
 * node looks again. torch's client retries a refused connect, so the
 * launcher may start at once then.
 */
import type { Logger } from '../log.js';
import { probeRequest } from '../probe/dial.js';
import { encodeMessage } from '../probe/protocol.js';
import { type Deadline, formatSeconds, sleepUntil } from '../reach/clock.js';
import { endpointText } from '../reach/endpoint.js';
import type { MeetingPoint } from './meeting-point.js';

/** Between looks at the port, in a small job: the launcher starts at most this long after the registry closed. */
const LOOK_EVERY_MS = 100;
/**
 * The looks the master's registry meets at most, every waiting node
 * together: a large job's nodes look less often (4,096 nodes: about once a
 * second), each a connection, a hello and a welcome. A launcher that starts
 * that much later loses nothing: the master's own torch takes longer to
 * import and bind its store.
 */
const LOOKS_PER_SECOND = 4_000;
/** One look: a registry answers a hello in a round trip (a look may end this much past the deadline). */
const LOOK_MS = 1_000;

/** The pause before the next look, spread ±50 % so that the nodes' looks do not come in waves. */
export function lookEveryMs(nodes: number, random = Math.random()): number {
  const every = Math.max(LOOK_EVERY_MS, (nodes / LOOKS_PER_SECOND) * 1_000);
  return every * (0.5 + random);
}

export async function untilRegistryCloses(input: {
  meeting: MeetingPoint;
  localAddress: string;
  selfName: string;
  /** The rendezvous' nodes: how many may be looking. */
  nodes: number;
  deadline: Deadline;
  logger: Logger;
}): Promise<void> {
  const { meeting, deadline, logger } = input;
  const began = performance.now();
  while (!deadline.passed()) {
    const look = await lookAt(input);
    if (!look.ok && look.error !== 'timed out') {
      logger.debug(
        `the master's probe registry at ${endpointText(meeting.target)} has closed (${look.error}), waited for ${formatSeconds(performance.now() - began)}: the port is torch's store's`,
      );
      return;
    }
    await sleepUntil(lookEveryMs(input.nodes), deadline);
  }
  logger.warn(
    `the master's probe registry still answers at ${endpointText(meeting.target)} at the end of --verify-timeout: its check has not ended, and this node's launcher may reach the registry instead of torch's store`,
  );
}

/** One hello at the port: the registry's welcome, 'timed out' where nothing settled it in LOOK_MS, or why it is not the registry. */
function lookAt(input: { meeting: MeetingPoint; localAddress: string; selfName: string }) {
  const { token } = input.meeting;
  return probeRequest<{ ok: true }>({
    target: input.meeting.target,
    localAddress: input.localAddress,
    limitMs: LOOK_MS,
    timedOut: () => ({ error: 'timed out', detail: `no answer in ${formatSeconds(LOOK_MS)}` }),
    onConnect: (socket) => {
      socket.write(
        encodeMessage({ kind: 'hello', token, peer: input.selfName, address: input.localAddress }),
      );
    },
    answer: (answer) => (answer.kind === 'welcome' ? { ok: true } : undefined),
    closedDetail: 'closed without answering the probe',
  });
}
