/**
 * NCCL's further socket devices in the miniature of `--verify peers` (SPEC
 * "NCCL's own pick"): where a kept NCCL_SOCKET_IFNAME matches several
 * interfaces, NCCL's socket transport listens on every one of them
 * (ncclNetSocketListen binds the device's address, port 0) and a peer's
 * channel connects to whichever device the channel runs on, its source
 * chosen by the kernel (ncclSocketConnect does not bind; v2.22.3-1
 * src/transport/net_socket.cc, src/misc/socket.cc). So each such device
 * listens here at an ephemeral port of its own, and every partner dials
 * each one; a device no partner can reach (link-local only, a bridge, a
 * network the others do not route to) fails the check, 75, naming it.
 */
import { familyOf, isLinkLocalAddress } from '../host/ip-address.js';
import type { NcclBind } from '../nccl/nccl-pick.js';
import { type DialOutcome, dialOnce } from '../probe/dial.js';
import { type DataDevice, encodeMessage, type Member, type Register } from '../probe/protocol.js';
import { type ProbeService, startProbeService } from '../probe/service.js';
import { attemptBudgetMs, backoffDelayMs } from '../reach/backoff.js';
import { type Deadline, sleepUntil } from '../reach/clock.js';
import { classifySocketError, type ReachFailure } from '../reach/reach-error.js';
import type { InboundLog } from './inbound-log.js';

/** Connections at a device's port that have not said hello yet. */
const DEVICE_PENDING = 16;

export interface DeviceListeners {
  /** The devices listening, with their ports: what this node registers. */
  listening: DataDevice[];
  /** A device whose address could not be bound here (NCCL would fail there too). */
  failed: { device: NcclBind; failure: ReachFailure } | null;
  close(): Promise<void>;
}

/**
 * One probe service per further device, at port 0 on its address (an IPv6
 * link-local one with its interface as scope, as getifaddrs gives NCCL).
 * Hellos that reach one are logged under the device's interface.
 */
export async function listenOnDevices(
  devices: readonly NcclBind[],
  token: string,
  inbound: InboundLog,
): Promise<DeviceListeners> {
  const services: ProbeService[] = [];
  const listening: DataDevice[] = [];
  let failed: DeviceListeners['failed'] = null;
  for (const device of devices) {
    try {
      const service = await startProbeService({
        host:
          familyOf(device.address) === 'ipv6' && isLinkLocalAddress(device.address)
            ? `${device.address}%${device.interface}`
            : device.address,
        port: 0,
        token,
        maxPending: DEVICE_PENDING,
        onHello: (hello, seen) =>
          inbound.deviceHello(device.interface, hello.peer, { seen, claimed: hello.address }),
      });
      services.push(service);
      listening.push({ ...device, port: service.port });
    } catch (error) {
      failed = { device, failure: classifySocketError(error) };
      break;
    }
  }
  return {
    listening,
    failed,
    close: async () => {
      await Promise.all(services.map((service) => service.close()));
    },
  };
}

export interface DeviceLeg {
  device: DataDevice;
  ok: boolean;
  detail: string | null;
  error: ReachFailure['error'] | null;
}

/**
 * Errors that time or a retry may cure (a neighbour that has not answered
 * ARP yet); any other answer is final, and so is no route at all: a device
 * on a network the other node does not route to stays so.
 */
function passing(outcome: Extract<DialOutcome, { ok: false }>): boolean {
  if (outcome.detail === 'ENETUNREACH') return false;
  return ['timed out', 'unreachable', 'no handshake'].includes(outcome.error);
}

/**
 * Dials a partner's device as its channels will: to the address and port it
 * listens on, the source left to the kernel. Retried with backoff until the
 * deadline while the path is silent, as the main leg is.
 */
export async function reachDevice(
  member: Member,
  device: DataDevice,
  options: {
    token: string;
    selfName: string;
    claimed: string;
    deadline: Deadline;
    attemptMs: number;
  },
): Promise<DeviceLeg> {
  const { deadline } = options;
  let last: DialOutcome = {
    ok: false,
    error: 'timed out',
    detail: 'no attempt fit in the timeout',
  };
  for (let attempt = 0; !deadline.passed(); attempt += 1) {
    last = await dialOnce({
      target: { address: device.address, port: device.port },
      localAddress: options.claimed,
      unbound: true,
      token: options.token,
      selfName: options.selfName,
      attemptMs: attemptBudgetMs(options.attemptMs, deadline.remainingMs()),
    });
    if (last.ok || !passing(last)) break;
    await sleepUntil(backoffDelayMs(attempt), deadline);
  }
  if (last.ok) return { device, ok: true, error: null, detail: null };
  const linkLocal = isLinkLocalAddress(device.address)
    ? ': it is link-local, so no other node can dial it, yet NCCL lists it as a device'
    : '';
  return {
    device,
    ok: false,
    error: last.error,
    detail: `${member.name}'s data-plane device ${deviceText(device)} did not take a connection (${last.error}, ${last.detail})${linkLocal}; NCCL's socket transport runs channels over it`,
  };
}

/** "eth1 198.18.21.2 port 40123". */
export function deviceText(device: DataDevice): string {
  return `${device.interface} ${device.address} port ${device.port}`;
}

/** The longest credential munge(1) may add to a registration (protocol.ts mungeCredential). */
const LONGEST_MUNGE = `MUNGE:${'A'.repeat(2_041)}:`;

/**
 * Drops the last devices until the registration, with the longest MUNGE
 * credential it may carry, fits one probe message; returns those dropped.
 */
export function fitDevices(claim: Omit<Register, 'v' | 'munge'>): string[] {
  const dropped: string[] = [];
  for (;;) {
    try {
      encodeMessage({ ...claim, munge: LONGEST_MUNGE });
      return dropped.reverse();
    } catch (error) {
      const last = claim.devices?.pop();
      if (!(error instanceof RangeError) || last === undefined) throw error;
      dropped.push(last[0]);
    }
  }
}
