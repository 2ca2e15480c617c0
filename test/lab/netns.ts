/**
 * Several "hosts" on one machine (shared/LAB.md): network namespaces joined
 * by veth pairs, with per-namespace /etc/hosts. Every Lab removes what it made
 * in cleanup(), which tests call in afterEach/afterAll, also when they fail.
 * Only documentation and benchmarking ranges are used for addresses
 * (198.18.0.0/15, 203.0.113.0/24, 2001:db8::/32).
 */
import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type Options as ExecaOptions, execa } from 'execa';

/** The `ip` the Lab runs (execa looks it up on PATH, as `command -v ip` does); null when none. */
function ipOnPath(): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'ip');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Why network namespaces cannot be made here, or null: they need root and
 * iproute2's `ip` on PATH; tests that need them skip with this reason otherwise.
 */
export const netnsUnavailable: string | null =
  process.getuid?.() !== 0
    ? 'network namespaces need root (CI runs as root)'
    : ipOnPath() === null
      ? `network namespaces need the ip command (iproute2), and none is on PATH (${process.env.PATH ?? ''})`
      : null;

let labCounter = 0;

export class Lab {
  readonly prefix: string;
  private readonly namespaces: string[] = [];

  constructor(tag: string) {
    labCounter += 1;
    // Short and unique per process: namespaces of parallel test files never collide.
    this.prefix = `ncr${process.pid % 100000}${labCounter}${tag}`.slice(0, 24);
  }

  /** The real namespace name of a host. */
  ns(host: string): string {
    return `${this.prefix}-${host}`;
  }

  /** Creates a host: a namespace with lo up and, if given, its own /etc/hosts. */
  async host(host: string, etcHosts?: string): Promise<string> {
    const name = this.ns(host);
    await execa('ip', ['netns', 'add', name]);
    this.namespaces.push(name);
    await this.ip(host, 'link', 'set', 'lo', 'up');
    if (etcHosts !== undefined) this.setHosts(host, etcHosts);
    return name;
  }

  /** Replaces the host's /etc/hosts (ip netns exec bind-mounts /etc/netns/NS/hosts). */
  setHosts(host: string, etcHosts: string): void {
    const dir = `/etc/netns/${this.ns(host)}`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/hosts`, etcHosts);
  }

  /** A veth pair between two hosts, named on each side as given, both up. */
  async link(hostA: string, ifA: string, hostB: string, ifB: string): Promise<void> {
    await execa('ip', [
      'link',
      'add',
      ifA,
      'netns',
      this.ns(hostA),
      'type',
      'veth',
      'peer',
      'name',
      ifB,
      'netns',
      this.ns(hostB),
    ]);
    await this.ip(hostA, 'link', 'set', ifA, 'up');
    await this.ip(hostB, 'link', 'set', ifB, 'up');
  }

  /** Adds an address (CIDR form) to an interface; IPv6 without duplicate address detection delay. */
  async addr(host: string, iface: string, cidr: string): Promise<void> {
    const extra = cidr.includes(':') ? ['nodad'] : [];
    await this.ip(host, 'addr', 'add', cidr, 'dev', iface, ...extra);
  }

  /** `ip ARGS` inside the host. */
  async ip(host: string, ...args: string[]): Promise<void> {
    await execa('ip', ['-n', this.ns(host), ...args]);
  }

  /** Runs a command inside the host (with its /etc/hosts). */
  exec(host: string, command: string, args: readonly string[], options: ExecaOptions = {}) {
    return execa('ip', ['netns', 'exec', this.ns(host), command, ...args], options);
  }

  /** Removes every namespace and /etc/netns entry this lab made. Safe to call twice. */
  async cleanup(): Promise<void> {
    for (const name of this.namespaces.splice(0)) {
      // Kill whatever still runs inside, so the namespace really goes away.
      await execa('ip', ['netns', 'pids', name], { reject: false }).then(async ({ stdout }) => {
        for (const pid of stdout.split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // already gone
          }
        }
      });
      await execa('ip', ['netns', 'del', name], { reject: false });
      rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
    }
  }
}
