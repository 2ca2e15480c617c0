/**
 * The mesh of `--verify peers` (SPEC "Verification"): this node dials every
 * partner in its roster at the address and ephemeral port the partner
 * registered, from its own chosen address, and waits until every partner
 * has dialled it; then it measures its throughput to the next node in ring
 * order while the previous one measures to it. Both sides report the
 * source address seen, so a NAT or a wrong source interface shows.
 *
 * A partner whose ephemeral port never takes the connection (dropped, or
 * rejected in the handshake: it listens there for as long as its check
 * runs) while its probe port (the rendezvous port) answers, be it with a
 * refusal, is behind a firewall that opens only the rendezvous ports: NCCL
 * would pass its rendezvous there and hang on its first connection, so
 * that is said in so many words, with the range to open. A connection
 * that was taken and then closed (a loaded or crowded listener) is never
 * that.
 *
 * Descriptors: at most DIAL_CONCURRENCY dials are in flight (partners in
 * ring order from this node on, so that at any moment each node is dialled
 * by a few, not by all), and the services shed connections past their own
 * bound; 4,095 partners never need 8,190 descriptors at once.
 */
import { sameAddress } from '../host/ip-address.js';
import type { Logger } from '../log.js';
import { type DialOutcome, dialOnce } from '../probe/dial.js';
import type { DataDevice, Member } from '../probe/protocol.js';
import { FIRST_SEGMENT_MS } from '../probe/service.js';
import { attemptBudgetMs, backoffDelayMs, PROGRESS_EVERY_MS } from '../reach/backoff.js';
import { type Deadline, formatSeconds, sleepUntil } from '../reach/clock.js';
import { endpointText } from '../reach/endpoint.js';
import type { ReachError } from '../reach/reach-error.js';
import { findingText } from '../readiness/finding.js';
import { compareMtus } from '../readiness/mtu.js';
import { formatRate, streamTo } from './bandwidth.js';
import { type DeviceLeg, deviceText, reachDevice } from './data-devices.js';
import type { InboundLog } from './inbound-log.js';

export const DIAL_CONCURRENCY = 64;
/** The first ephemeral dial has not answered by now: look at the probe port meanwhile. */
const DIAGNOSE_AFTER_MS = 1_000;
/** Past two SYN retransmissions (RFC 6298's 1 s, then 2 s more): a DROP, not a lost packet. */
const EPHEMERAL_GRACE_MS = 3_500;
const DIAGNOSIS_ATTEMPT_MS = 2_000;
/** How often the wait for inbound legs looks again at what time alone settles. */
const RECHECK_MS = 250;
/** Without --min-bandwidth, under this share of the slower end's link speed is a warning. */
const FAR_BELOW_LINK = 0.1;

export interface Leg {
  ok: boolean;
  error: ReachError | null;
  detail: string | null;
}

export interface PartnerProbe {
  member: Member;
  /** This node → the partner; `seen` is the source address the partner saw. */
  outbound: Leg & { seen: string | null; elapsedMs: number };
  /** The partner → this node; `source` is the source address we saw. */
  inbound: Leg & { source: string | null };
  /** This node → each of the partner's further data-plane devices (peers/data-devices.ts). */
  devices: DeviceLeg[];
  /** Measured by this node to the partner (it is next in ring order), Mbit/s. */
  bandwidthMbps: number | null;
  /** Measured by the partner to this node (we are its next), Mbit/s. */
  inboundBandwidthMbps: number | null;
}

/** Both legs to the partner passed (its data-plane devices' and the bandwidth floor's verdicts are folded into them). */
export function partnerPassed(probe: PartnerProbe): boolean {
  return probe.outbound.ok && probe.inbound.ok;
}

export interface MeshOptions {
  self: Member;
  /** This node's further data-plane devices, each listening at its own port. */
  devices: readonly DataDevice[];
  /** The roster, in ring order, this node's own entry among them. */
  members: readonly Member[];
  localAddress: string;
  interfaceName: string;
  /** The meeting point's port: the registry answers there on the master; elsewhere the kernel, with a refusal. */
  probePort: number;
  token: string;
  deadline: Deadline;
  logger: Logger;
  inbound: InboundLog;
  attemptMs: number;
  bandwidth: { windowMs: number; minMbps: number | null };
  progressEveryMs?: number;
}

export interface MeshOutcome {
  partners: PartnerProbe[];
  warnings: string[];
}

export async function probeMesh(options: MeshOptions): Promise<MeshOutcome> {
  const { members, self, deadline, inbound } = options;
  const own = members.indexOf(self);
  // From the next node on, round the ring: spreads everyone's dials over everyone.
  const partners = [...members.slice(own + 1), ...members.slice(0, own)];
  const next = partners[0];
  const previous = partners.at(-1);
  const results = new Map<string, PartnerProbe>(
    partners.map((member) => [member.name, blank(member)]),
  );
  const pending = new Set(partners.map((member) => member.name));
  const progress = setInterval(
    () => logProgress(options, results, pending),
    options.progressEveryMs ?? PROGRESS_EVERY_MS,
  );
  let expired: () => void = () => {};
  const timeout = new Promise<void>((resolve) => {
    expired = resolve;
  });
  const timer = setTimeout(expired, deadline.remainingMs());
  let ended: ReturnType<typeof watchEnded> | null = null;
  try {
    await eachBounded(partners, DIAL_CONCURRENCY, async (member) => {
      const probe = results.get(member.name) as PartnerProbe;
      probe.outbound = await reach(member, options);
      // A partner this node cannot reach at all fails already; its devices add nothing.
      if (probe.outbound.ok) {
        for (const device of member.devices) {
          const leg = await reachDevice(member, device, {
            token: options.token,
            selfName: self.name,
            claimed: options.localAddress,
            deadline,
            attemptMs: options.attemptMs,
          });
          probe.devices.push(leg);
          if (leg.ok) {
            options.logger.info(
              `reached ${member.name}'s data-plane device ${deviceText(device)} besides its ${member.interface}`,
            );
          }
        }
      }
      pending.delete(member.name);
    });
    // After our own dials, so the figure is not shared with them; past the
    // deadline, not at all. Through a NAT too: the next node saw our hello
    // arrive, so it waits for the stream, and the path's figure still counts.
    const toNext = next === undefined ? null : results.get(next.name)?.outbound;
    const nextReached =
      toNext != null &&
      (toNext.ok || toNext.error === 'wrong source address') &&
      !deadline.passed();
    const streamed = nextReached && next ? measure(next, options, results) : Promise.resolve();
    ended = watchEnded(partners, results, options);
    const gone = ended;
    await Promise.all([
      streamed,
      inbound.until(
        () =>
          partners.every(
            (member) => inboundSettled(member, inbound, options.devices) || gone.has(member.name),
          ) &&
          (previous === undefined ||
            !inbound.ephemeral.has(previous.name) ||
            inbound.streams.has(previous.name)),
        timeout,
        RECHECK_MS,
      ),
    ]);
  } finally {
    ended?.stop();
    clearInterval(progress);
    clearTimeout(timer);
  }
  const outbound = new Map([...results].map(([name, probe]) => [name, probe.outbound]));
  for (const probe of results.values()) {
    const context = { ...options, outbound, ended: ended ?? new Set<string>() };
    probe.inbound = deviceInbound(probe.member, inboundLeg(probe.member, context), context);
    probe.outbound = deviceOutbound(probe);
  }
  const warnings: string[] = mtuMismatch(options);
  if (previous !== undefined) {
    const arrival = inbound.streams.get(previous.name);
    const probe = results.get(previous.name) as PartnerProbe;
    if (arrival) probe.inboundBandwidthMbps = (arrival.bytes * 8) / (arrival.ms * 1_000);
    if (arrival?.bytes === 0 && probe.inbound.ok) {
      probe.inbound = {
        ...probe.inbound,
        ok: false,
        error: 'large frames dropped',
        detail: `${previous.name}'s stream sent its first line but none of the full-size segments that followed arrived in ${formatSeconds(options.bandwidth.windowMs + FIRST_SEGMENT_MS)}: a hop carries smaller frames than the ends' MTU${mtuPair(options.self, previous)} (an MTU black hole)`,
      };
    }
    judgeInboundRate(probe, options);
  }
  if (next !== undefined)
    warnings.push(...judgeRate(results.get(next.name) as PartnerProbe, options));
  return { partners: [...results.values()], warnings };
}

async function reach(member: Member, options: MeshOptions): Promise<PartnerProbe['outbound']> {
  const { deadline } = options;
  const target = { address: member.address, port: member.port };
  const dial = (attemptMs: number, onConnect?: () => void) =>
    dialOnce({
      target,
      localAddress: options.localAddress,
      token: options.token,
      selfName: options.self.name,
      attemptMs,
      ...(onConnect && { onConnect }),
    });
  let diagnosis: Promise<DialOutcome> | null = null;
  const probePortAnswers = () => {
    diagnosis ??= dialOnce({
      target: { address: member.address, port: options.probePort },
      localAddress: options.localAddress,
      token: options.token,
      selfName: options.self.name,
      attemptMs: DIAGNOSIS_ATTEMPT_MS,
    });
    return diagnosis.then((outcome) => outcome.ok || ANSWERED.has(outcome.error));
  };
  let last: DialOutcome = {
    ok: false,
    error: 'timed out',
    detail: 'no attempt fit in the timeout',
  };
  for (let attempt = 0; !deadline.passed(); attempt += 1) {
    const started = performance.now();
    const connect = { done: false };
    const dialling = dial(attemptBudgetMs(options.attemptMs, deadline.remainingMs()), () => {
      connect.done = true;
    });
    const outcome = await settleOrDiagnose(dialling, attempt === 0, connect, probePortAnswers);
    if (
      outcome === 'blocked' ||
      (outcome.ok === false &&
        unanswered(outcome.error) &&
        !connect.done &&
        (await probePortAnswers()))
    ) {
      const how =
        outcome === 'blocked'
          ? `no answer in ${formatSeconds(performance.now() - started)}`
          : outcome.error;
      return {
        ok: false,
        error: 'ephemeral ports blocked',
        detail: `${how} on its ephemeral port ${member.port} while its rendezvous port ${options.probePort} answers: ${ephemeralAdvice(member, options.interfaceName)}`,
        seen: null,
        elapsedMs: options.deadline.elapsedMs(),
      };
    }
    last = outcome;
    if (last.ok || last.error === 'address not available') break;
    await sleepUntil(backoffDelayMs(attempt), deadline);
  }
  return outboundLeg(last, options.localAddress, deadline.elapsedMs());
}

/**
 * The first attempt's answer; or, when its TCP connect is slow, a look at
 * the probe port meanwhile, and 'blocked' when that answers while the
 * ephemeral port has not even completed the handshake past two SYN
 * retransmissions. A connection that is up but slow to answer the hello is
 * a busy peer, and is waited for.
 */
async function settleOrDiagnose(
  dialling: Promise<DialOutcome>,
  first: boolean,
  connect: { done: boolean },
  probePortAnswers: () => Promise<boolean>,
): Promise<DialOutcome | 'blocked'> {
  if (!first) return dialling;
  const quick = await Promise.race([dialling, delay(DIAGNOSE_AFTER_MS).then(() => null)]);
  if (quick !== null || connect.done) return quick ?? dialling;
  const answers = probePortAnswers();
  const late = await Promise.race([
    dialling,
    delay(EPHEMERAL_GRACE_MS - DIAGNOSE_AFTER_MS).then(() => null),
  ]);
  if (late !== null || connect.done) return late ?? dialling;
  return (await answers) ? 'blocked' : dialling;
}

/** How often a partner that has not reached us is looked at, to learn whether its check has ended. */
const ENDED_EVERY_MS = 1_000;

/**
 * The partners whose check has ended without reaching us: their ephemeral
 * service, which this node reached, now refuses. They will not dial any
 * more, so the wait for them ends in seconds instead of at the timeout (a
 * node behind a firewall that drops what comes in learns it so).
 */
function watchEnded(
  partners: readonly Member[],
  results: ReadonlyMap<string, PartnerProbe>,
  options: MeshOptions,
): Set<string> & { stop(): void } {
  const ended = new Set<string>() as Set<string> & { stop(): void };
  let looking = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    const waiting = partners.filter(
      (member) =>
        !ended.has(member.name) &&
        !reachedAll(member, options.inbound, options.devices) &&
        results.get(member.name)?.outbound.ok === true,
    );
    await eachBounded(waiting, DIAL_CONCURRENCY, async (member) => {
      const outcome = await dialOnce({
        target: { address: member.address, port: member.port },
        localAddress: options.localAddress,
        token: options.token,
        selfName: options.self.name,
        attemptMs: DIAGNOSIS_ATTEMPT_MS,
      });
      if (!outcome.ok && outcome.error === 'refused') ended.add(member.name);
    });
    looking = false;
  };
  const timer = setInterval(() => void look(), ENDED_EVERY_MS);
  ended.stop = () => clearInterval(timer);
  return ended;
}

/**
 * The partner reached us, or it gave up on our ephemeral port: it looks at
 * the probe port only after its own attempt there went unanswered, and
 * decides after EPHEMERAL_GRACE_MS at most. So a node behind that firewall
 * fails in seconds too, not at the timeout.
 */
function inboundSettled(
  member: Member,
  inbound: InboundLog,
  devices: readonly DataDevice[],
): boolean {
  // Past our ephemeral port it dials our devices, one by one, before it is done.
  if (inbound.ephemeral.has(member.name))
    return inbound.missedDevices(member.name, devices).length === 0;
  const looked = inbound.probePort.get(member.name);
  return looked !== undefined && performance.now() - looked.at > EPHEMERAL_GRACE_MS;
}

/** The partner reached this node's ephemeral port and every further device. */
function reachedAll(member: Member, inbound: InboundLog, devices: readonly DataDevice[]): boolean {
  return (
    inbound.ephemeral.has(member.name) && inbound.missedDevices(member.name, devices).length === 0
  );
}

/** The first of the partner's devices this node could not reach fails the outbound leg. */
function deviceOutbound(probe: PartnerProbe): PartnerProbe['outbound'] {
  const failed = probe.devices.filter((leg) => !leg.ok);
  const [first] = failed;
  if (!probe.outbound.ok || first === undefined) return probe.outbound;
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more of its devices)` : '';
  return {
    ...probe.outbound,
    ok: false,
    error: first.error,
    detail: `${first.detail}${more}`,
  };
}

/**
 * A partner that reached this node's ephemeral port but not each of its
 * further devices: NCCL's channels to those devices would hang.
 */
function deviceInbound(
  member: Member,
  leg: PartnerProbe['inbound'],
  options: MeshOptions & { ended: ReadonlySet<string> },
): PartnerProbe['inbound'] {
  if (!leg.ok) return leg;
  const missed = options.inbound.missedDevices(member.name, options.devices);
  const [first] = missed;
  if (first === undefined) return leg;
  const when = options.ended.has(member.name)
    ? 'before its own check ended (its log says why)'
    : `in ${formatSeconds(options.deadline.totalMs)}`;
  const names = missed.map((device) => device.interface).join(', ');
  return {
    ...leg,
    ok: false,
    error: 'unreachable',
    detail: `did not reach this node's data-plane device ${deviceText(first)} ${when}: NCCL_SOCKET_IFNAME matches ${names} here too, and NCCL's socket transport runs channels over each; set NCCL_SOCKET_IFNAME==${options.interfaceName}, the one interface that carries the job`,
  };
}

/**
 * An ephemeral port that never took the connection: dropped, reset or
 * rejected during the handshake, though the partner listens there for as
 * long as its check runs. One that was taken and then closed is a loaded
 * or crowded listener, never a firewall.
 */
function unanswered(error: ReachError): boolean {
  return error === 'timed out' || error === 'refused' || error === 'unreachable';
}

/** A host that answers at a port, with a probe, a refusal or anything at all: the path to it is open there. */
const ANSWERED = new Set<ReachError>(['refused', 'other job', 'no handshake']);

/** What to open (SPEC: "with the range in use and what to open"). */
function ephemeralAdvice(member: Member, interfaceName: string): string {
  const [low, high] = member.portRange;
  return `NCCL listens on ephemeral ports (net.ipv4.ip_local_port_range ${low}-${high} on ${member.name}); open TCP ${low}-${high} between the nodes on ${interfaceName}, as for the rendezvous ports`;
}

function outboundLeg(
  outcome: DialOutcome,
  localAddress: string,
  elapsedMs: number,
): PartnerProbe['outbound'] {
  if (!outcome.ok)
    return { ok: false, error: outcome.error, detail: outcome.detail, seen: null, elapsedMs };
  if (!sameAddress(outcome.seen, localAddress)) {
    return {
      ok: false,
      error: 'wrong source address',
      detail: `it saw ${outcome.seen}, we sent from ${localAddress}`,
      seen: outcome.seen,
      elapsedMs,
    };
  }
  return { ok: true, error: null, detail: null, seen: outcome.seen, elapsedMs };
}

function inboundLeg(
  member: Member,
  options: MeshOptions & {
    outbound: ReadonlyMap<string, PartnerProbe['outbound']>;
    /** Partners whose check ended without reaching us. */
    ended: ReadonlySet<string>;
  },
): PartnerProbe['inbound'] {
  const arrival = options.inbound.ephemeral.get(member.name);
  if (arrival !== undefined) {
    return sameAddress(arrival.seen, arrival.claimed)
      ? { ok: true, error: null, detail: null, source: arrival.seen }
      : {
          ok: false,
          error: 'wrong source address',
          detail: `saw ${arrival.seen}, it sends from ${arrival.claimed}`,
          source: arrival.seen,
        };
  }
  const where = endpointText({ address: options.self.address, port: options.self.port });
  if (options.inbound.probePort.has(member.name)) {
    const [low, high] = options.self.portRange;
    return {
      ok: false,
      error: 'ephemeral ports blocked',
      detail: `it reached this node's probe port ${options.probePort} but not its ephemeral port ${where}: a firewall here lets the rendezvous ports through but not net.ipv4.ip_local_port_range ${low}-${high}; open TCP ${low}-${high} on ${options.interfaceName}`,
      source: null,
    };
  }
  const reachedIt = options.outbound.get(member.name)?.ok === true;
  const [low, high] = options.self.portRange;
  return {
    ok: false,
    error: 'timed out',
    detail: reachedIt
      ? `did not reach ${where} ${options.ended.has(member.name) ? 'before its own check ended' : `in ${formatSeconds(options.deadline.totalMs)}`}, though this node reached its: a firewall here may let the rendezvous port through but not net.ipv4.ip_local_port_range ${low}-${high}; open TCP ${low}-${high} on ${options.interfaceName}`
      : `did not reach ${where} in ${formatSeconds(options.deadline.totalMs)}`,
    source: null,
  };
}

/**
 * Streams to the next node until one measurement comes back or the
 * deadline passes: the next node waits for our stream once our hello has
 * reached it, so a stream lost to a loaded moment is tried again, not left
 * for it to wait on until the timeout.
 */
async function measure(
  next: Member,
  options: MeshOptions,
  results: Map<string, PartnerProbe>,
): Promise<void> {
  const { deadline } = options;
  const once = () =>
    streamTo({
      target: { address: next.address, port: next.port },
      localAddress: options.localAddress,
      token: options.token,
      selfName: options.self.name,
      windowMs: options.bandwidth.windowMs,
      attemptMs: attemptBudgetMs(options.attemptMs, deadline.remainingMs()),
    });
  let outcome = await once();
  for (let attempt = 0; !outcome.ok && !deadline.passed(); attempt += 1) {
    if (outcome.error === 'address not available') break;
    await sleepUntil(backoffDelayMs(attempt), deadline);
    if (deadline.passed()) break;
    outcome = await once();
  }
  const probe = results.get(next.name) as PartnerProbe;
  if (outcome.ok && outcome.bytes === 0 && probe.outbound.ok) {
    // The stream's line went through (the receiver answered), its data did not.
    probe.outbound = {
      ...probe.outbound,
      ok: false,
      error: 'large frames dropped',
      detail: `${next.name} got the stream's first line but none of the full-size segments that followed in ${formatSeconds(options.bandwidth.windowMs + FIRST_SEGMENT_MS)}: a hop on the path carries smaller frames than ${options.interfaceName}'s MTU${mtuPair(options.self, next)} and the ICMP that would say so is lost (an MTU black hole); NCCL's large transfers would hang there. Set the interfaces' MTU to what the path carries`,
    };
    return;
  }
  if (outcome.ok) {
    probe.bandwidthMbps = outcome.mbps;
    options.logger.info(
      `throughput ${options.self.name} → ${next.name} (next in ring order) via ${options.interfaceName}: ${formatRate(outcome.mbps)} (${outcome.bytes} bytes in ${outcome.ms} ms)`,
    );
    return;
  }
  // A leg that failed already keeps the first reason.
  if (!probe.outbound.ok) return;
  probe.outbound = {
    ...probe.outbound,
    ok: false,
    error: outcome.error,
    detail: `the throughput measurement failed: ${outcome.detail}`,
  };
}

/** " (this node's 9000, node02's 1500)": the MTUs the two ends registered, where known. */
function mtuPair(self: Member, other: Member): string {
  if (self.mtu === null && other.mtu === null) return '';
  return ` (${self.name}'s ${self.mtu ?? 'unknown'}, ${other.name}'s ${other.mtu ?? 'unknown'})`;
}

/**
 * SPEC "Readiness": the chosen interfaces' MTUs compared across the nodes
 * this one meshes with (readiness/mtu.ts), a mismatch a warning naming them.
 */
function mtuMismatch({ self, members, interfaceName }: MeshOptions): string[] {
  if (self.mtu === null) return [];
  const peers = members.flatMap((member) =>
    member === self || member.mtu === null ? [] : [{ node: member.name, mtu: member.mtu }],
  );
  const verdict = compareMtus(interfaceName, self.mtu, peers);
  return verdict.level === 'ok' ? [] : [findingText({ check: 'mtu', ...verdict })];
}

/** SPEC --min-bandwidth: below it fails; without it, far below the link's speed warns. */
function judgeRate(probe: PartnerProbe, options: MeshOptions): string[] {
  const mbps = probe.bandwidthMbps;
  if (mbps === null) return [];
  const { minMbps } = options.bandwidth;
  const pair = `${options.self.name} → ${probe.member.name}`;
  if (minMbps !== null) {
    if (mbps < minMbps && probe.outbound.ok) {
      probe.outbound = {
        ...probe.outbound,
        ok: false,
        error: 'below the bandwidth',
        detail: `${pair} measured ${formatRate(mbps)}, below --min-bandwidth ${formatRate(minMbps)}`,
      };
    }
    return [];
  }
  const link = Math.min(options.self.speedMbps ?? Infinity, probe.member.speedMbps ?? Infinity);
  if (Number.isFinite(link) && mbps < link * FAR_BELOW_LINK) {
    return [
      `throughput ${pair} via ${options.interfaceName} is ${formatRate(mbps)}, under a tenth of the link's ${formatRate(link)} (the slower end's speed): a shaper, a slow hop or a link that negotiated down lies on the path; --min-bandwidth makes this a failure`,
    ];
  }
  return [];
}

/** The receiving end of the slow pair fails too, so both nodes of it name it. */
function judgeInboundRate(probe: PartnerProbe, options: MeshOptions): void {
  const { minMbps } = options.bandwidth;
  const mbps = probe.inboundBandwidthMbps;
  if (minMbps === null || mbps === null || mbps >= minMbps || !probe.inbound.ok) return;
  probe.inbound = {
    ...probe.inbound,
    ok: false,
    error: 'below the bandwidth',
    detail: `${probe.member.name} → ${options.self.name} measured ${formatRate(mbps)}, below --min-bandwidth ${formatRate(minMbps)}`,
  };
}

function blank(member: Member): PartnerProbe {
  return {
    member,
    outbound: { ok: false, error: null, detail: null, seen: null, elapsedMs: 0 },
    devices: [],
    inbound: { ok: false, error: null, detail: null, source: null },
    bandwidthMbps: null,
    inboundBandwidthMbps: null,
  };
}

/** Runs `work` over the items, at most `limit` at a time. */
async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let nextIndex = 0;
  const worker = async () => {
    while (nextIndex < items.length) {
      const item = items[nextIndex] as T;
      nextIndex += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

const LISTED_IN_PROGRESS = 5;

function logProgress(
  options: MeshOptions,
  results: ReadonlyMap<string, PartnerProbe>,
  pending: ReadonlySet<string>,
): void {
  const waits: string[] = [];
  for (const probe of results.values()) {
    const parts: string[] = [];
    if (pending.has(probe.member.name)) {
      parts.push(`to ${endpointText({ address: probe.member.address, port: probe.member.port })}`);
    }
    if (!options.inbound.ephemeral.has(probe.member.name)) parts.push('has not reached us');
    if (parts.length > 0) waits.push(`${probe.member.name} (${parts.join('; ')})`);
  }
  if (waits.length === 0) return;
  const more =
    waits.length > LISTED_IN_PROGRESS ? `, and ${waits.length - LISTED_IN_PROGRESS} more` : '';
  options.logger.info(
    `meshing with ${waits.length} of ${results.size} peers via ${options.interfaceName}, ${Math.round(options.deadline.elapsedMs() / 1000)}s of ${formatSeconds(options.deadline.totalMs)}: ${waits.slice(0, LISTED_IN_PROGRESS).join(', ')}${more}`,
  );
}
