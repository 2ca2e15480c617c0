/**
 * What reached this node, as its services saw it, from the moment they
 * listen: peers that got the roster earlier dial before this node has its
 * own. Kept by the roster name the dialer gives (the registry's label), and
 * by where it arrived: the registered ephemeral port, or the probe port
 * (a peer that could not reach the ephemeral one looks there to tell a
 * firewall from a dead path).
 */
export interface Arrival {
  seen: string;
  /** The address the dialer says it sent from. */
  claimed: string;
  /** performance.now() when it arrived. */
  at: number;
}

export interface StreamArrival {
  seen: string;
  bytes: number;
  ms: number;
}

export class InboundLog {
  readonly ephemeral = new Map<string, Arrival>();
  readonly probePort = new Map<string, Arrival>();
  readonly streams = new Map<string, StreamArrival>();
  /** By this node's further data-plane device (its interface), then by peer (peers/data-devices.ts). */
  readonly devices = new Map<string, Map<string, Arrival>>();
  private listeners = new Set<() => void>();

  hello(via: 'ephemeral' | 'probe port', peer: string, arrival: Omit<Arrival, 'at'>): void {
    (via === 'ephemeral' ? this.ephemeral : this.probePort).set(peer, {
      ...arrival,
      at: performance.now(),
    });
    this.changed();
  }

  deviceHello(device: string, peer: string, arrival: Omit<Arrival, 'at'>): void {
    const byPeer = this.devices.get(device) ?? new Map<string, Arrival>();
    byPeer.set(peer, { ...arrival, at: performance.now() });
    this.devices.set(device, byPeer);
    this.changed();
  }

  /** Those of these devices of this node that `peer` has not reached. */
  missedDevices<D extends { interface: string }>(peer: string, devices: readonly D[]): D[] {
    return devices.filter((device) => this.devices.get(device.interface)?.has(peer) !== true);
  }

  stream(peer: string, arrival: StreamArrival): void {
    this.streams.set(peer, arrival);
    this.changed();
  }

  /**
   * Resolves once `done()` holds, checked at every arrival and every
   * `recheckMs` (a condition may turn true with time alone); or when
   * `abort` resolves.
   */
  until(done: () => boolean, abort: Promise<void>, recheckMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearInterval(timer);
        this.listeners.delete(check);
        resolve();
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = setInterval(check, recheckMs);
      this.listeners.add(check);
      abort.then(finish);
    });
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
