/**
 * The differential fuzz (issue 38): seeded layouts (layout-fuzz.ts) built as
 * network namespaces, and on each, nccl-run's explain --json set beside the
 * real NCCL of each lab root (nccl-oracle.ts), comparison by comparison:
 *
 * - `unmanaged`: what nccl-run says NCCL binds if nccl-run set nothing
 *   (`unmanaged.nccl`), against NCCL run with the user's environment alone;
 * - `decision`: where nccl-run decided, NCCL run with exactly the variables
 *   it exports must bind the decision's interface and address;
 * - `pick`: what nccl-run says NCCL binds in the job (`nccl.pick`), against
 *   NCCL run with the user's environment and nccl-run's variables;
 * - `devices` (issue 42): the socket transport's device list nccl-run
 *   reports (`nccl.devices`, `unmanaged.nccl.devices`): its first element
 *   against the real NCCL's bootstrap pick (without NCCL_COMM_ID, the same
 *   walk), and the whole list against the one the source implies on the
 *   host's real getifaddrs (socket-devices.ts: no GPU, no ncclNetSocketInit);
 * - each of the layout's kept settings (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY): `pick` and
 *   `unmanaged` again under it. A refusal's explain --json keeps `nccl` and
 *   `unmanaged`, so a refused setting is compared too.
 *
 * - Gloo (gloo-fuzz.ts): `unmanaged.gloo` against the device torch 2.6
 *   makes on the host, by its hostname's /etc/hosts and under the layout's
 *   GLOO_SOCKET_IFNAME.
 *
 * A mismatch carries the layout, so that it can be replayed and added to
 * the hand-written ORACLE_LAYOUTS.
 */
import { execa } from 'execa';
import { ncclBehaviour } from '../../src/nccl/behaviour.js';
import { type GlooDeviceCase, glooDevices } from './gloo-fuzz.js';
import { type FuzzLayout, generateLayout } from './layout-fuzz.js';
import { addWire, type Bind, buildHost, ncclBootstrap, runNcclRun } from './nccl-oracle.js';
import type { Lab } from './netns.js';
import { sourceDevices } from './socket-devices.js';

export interface FuzzStack {
  /** The lab root's suite, for the report. */
  suite: string;
  /** Its libnccl2, X.Y.Z (NCCL_VERSION for nccl-run, the log format for the oracle). */
  nccl: string;
  root: string;
}

export interface Comparison {
  layout: string;
  stack: string;
  /** The user's NCCL_SOCKET_IFNAME, or 'nothing set'. */
  setting: string;
  what: 'unmanaged' | 'decision' | 'pick' | 'gloo' | 'devices';
  ncclRun: string;
  nccl: string;
  equal: boolean;
}

export interface Mismatch {
  comparison: Comparison;
  layout: FuzzLayout;
  /** NCCL's log and nccl-run's stderr, for the report. */
  log: string;
}

export interface FuzzResult {
  layouts: number;
  /** nccl-run's exit status with nothing set, per layout and stack: 0 decided, 69 refused, ... */
  outcomes: Map<number, number>;
  /** The refusals' messages, for the report. */
  refusals: string[];
  comparisons: Comparison[];
  mismatches: Mismatch[];
  seconds: number;
}

interface Explained {
  exitCode: number;
  decision: { interface: string; address: string } | null;
  env: Record<string, string>;
  pick: Bind | undefined;
  unmanaged: Bind | undefined;
  /** nccl.devices and unmanaged.nccl.devices: the socket transport's devices, in NCCL's index order. */
  devices: Bind[] | undefined;
  unmanagedDevices: Bind[] | undefined;
  gloo: Bind | undefined;
  /** The refusal's message; null where it decided. */
  error: string | null;
  stderr: string;
}

const show = (bind: Bind | undefined): string =>
  bind === undefined
    ? 'not reported'
    : bind === null
      ? 'none'
      : `${bind.interface} ${bind.address}`;

/** IPv6 duplicate address detection: a tentative address cannot be bound yet, so NCCL is asked once none is left. */
export async function settleAddresses(lab: Lab, hosts: readonly string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const host of hosts) {
    for (;;) {
      const { stdout } = await execa('ip', ['-n', lab.ns(host), '-6', 'addr', 'show', 'tentative']);
      if (stdout.trim() === '') break;
      if (Date.now() > deadline)
        throw new Error(`${host} still has tentative addresses:\n${stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Runs `count` layouts of `seed` against every stack, `concurrency` layouts
 * at a time, in `lab` (which it fills and leaves for the caller's cleanup).
 */
export async function runFuzz(options: {
  seed: number;
  count: number;
  stacks: readonly FuzzStack[];
  build: string;
  lab: Lab;
  /** The Debian root whose torch makes Gloo's devices (gloo-fuzz.ts); none: Gloo is not compared. */
  glooRoot?: string;
  concurrency?: number;
}): Promise<FuzzResult> {
  const started = Date.now();
  const { lab, stacks, build } = options;
  const layouts = Array.from({ length: options.count }, (_, index) =>
    generateLayout(options.seed, index),
  );
  await addWire(lab);
  const hosts = layouts.map((_, index) => `l${index}`);
  for (const [index, layout] of layouts.entries()) {
    await buildHost(lab, hosts[index] as string, layout.spec);
  }
  await settleAddresses(lab, hosts);

  const comparisons: Comparison[] = [];
  const mismatches: Mismatch[] = [];
  const outcomes = new Map<number, number>();
  const refusals: string[] = [];
  /** nccl-run's unmanaged.gloo by Gloo case id (gloo-fuzz.ts), from the first stack's explain. */
  const glooSays = new Map<string, { bind: Bind | undefined; stderr: string }>();
  const queue = layouts.map((layout, index) => ({ layout, host: hosts[index] as string }));
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      for (const stack of stacks) {
        const { found, plain } = await compareLayout(lab, build, next.host, next.layout, stack);
        outcomes.set(plain.exitCode, (outcomes.get(plain.exitCode) ?? 0) + 1);
        if (plain.error !== null) refusals.push(`${next.layout.id} ${stack.nccl}: ${plain.error}`);
        comparisons.push(...found.map((entry) => entry.comparison));
        if (stack === stacks[0] && options.glooRoot !== undefined) {
          // Gloo does not depend on NCCL's release: the first stack's explains say it.
          const named = await explain(lab, build, next.host, next.layout, stack, {
            GLOO_SOCKET_IFNAME: next.layout.gloo,
          });
          glooSays.set(next.layout.id, { bind: plain.gloo, stderr: plain.stderr });
          glooSays.set(`${next.layout.id}-ifname`, { bind: named.gloo, stderr: named.stderr });
        }
        mismatches.push(
          ...found
            .filter((entry) => !entry.comparison.equal)
            .map((entry) => ({
              comparison: entry.comparison,
              layout: next.layout,
              log: entry.log,
            })),
        );
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 2 }, worker));
  if (options.glooRoot !== undefined) {
    const cases: GlooDeviceCase[] = layouts.flatMap((layout, index) => {
      const base = {
        host: hosts[index] as string,
        hostname: layout.spec.hostname,
        etcHosts: layout.spec.etcHosts,
      };
      return [
        { ...base, id: layout.id },
        { ...base, id: `${layout.id}-ifname`, GLOO_SOCKET_IFNAME: layout.gloo },
      ];
    });
    const devices = await glooDevices(lab, options.glooRoot, cases);
    for (const [index, entry] of cases.entries()) {
      const layout = layouts[Math.floor(index / 2)] as FuzzLayout;
      const device = devices.get(entry.id);
      const said = glooSays.get(entry.id);
      const ncclRun = said?.bind === undefined ? 'not reported' : (said.bind?.address ?? 'none');
      const real = device?.address ?? 'none';
      const comparison: Comparison = {
        layout: layout.id,
        stack: 'Gloo (torch 2.6)',
        setting:
          entry.GLOO_SOCKET_IFNAME === undefined
            ? 'nothing set'
            : `GLOO_SOCKET_IFNAME=${entry.GLOO_SOCKET_IFNAME}`,
        what: 'gloo',
        ncclRun,
        nccl: real,
        equal: ncclRun === real,
      };
      comparisons.push(comparison);
      if (!comparison.equal) {
        mismatches.push({
          comparison,
          layout,
          log: `Gloo: ${device?.outcome ?? '?'}\nnccl-run:\n${said?.stderr ?? ''}`,
        });
      }
    }
  }
  return {
    layouts: layouts.length,
    outcomes,
    refusals,
    comparisons,
    mismatches,
    seconds: (Date.now() - started) / 1000,
  };
}

async function compareLayout(
  lab: Lab,
  build: string,
  host: string,
  layout: FuzzLayout,
  stack: FuzzStack,
): Promise<{ found: { comparison: Comparison; log: string }[]; plain: Explained }> {
  let plain: Explained | undefined;
  const out: { comparison: Comparison; log: string }[] = [];
  const implied: {
    setting: string;
    env: Record<string, string>;
    listed: Bind[] | undefined;
    stderr: string;
  }[] = [];
  const nccl = (env: Record<string, string>) =>
    ncclBootstrap(lab, host, stack.root, stack.nccl, env).then(
      (run) => ({ bind: run.bind as Bind | undefined, log: run.log }),
      (error: Error) => ({ bind: undefined, log: error.message }),
    );
  const compare = (
    setting: string,
    what: Comparison['what'],
    ncclRun: string,
    real: { bind: Bind | undefined; log: string; list?: string },
    stderr: string,
  ) => {
    const said = real.list ?? show(real.bind);
    out.push({
      comparison: {
        layout: layout.id,
        stack: `${stack.suite} ${stack.nccl}`,
        setting,
        what,
        ncclRun,
        nccl: said,
        equal: (real.list !== undefined || real.bind !== undefined) && ncclRun === said,
      },
      log: `NCCL:\n${real.log}\nnccl-run:\n${stderr}`,
    });
  };

  for (const kept of [null, ...layout.kept]) {
    const userEnv: Record<string, string> = kept ?? {};
    const setting =
      kept === null
        ? 'nothing set'
        : Object.entries(kept)
            .map(([name, value]) => `${name}=${value}`)
            .join(' ');
    const explained = await explain(lab, build, host, layout, stack, userEnv);
    if (kept === null) plain = explained;
    const alone = await nccl(userEnv);
    compare(setting, 'unmanaged', show(explained.unmanaged), alone, explained.stderr);
    const exported = Object.keys(explained.env).some((name) => name.startsWith('NCCL_'));
    const withVariables = exported ? await nccl({ ...userEnv, ...explained.env }) : alone;
    compare(setting, 'pick', show(explained.pick), withVariables, explained.stderr);
    const jobEnv = { ...userEnv, ...explained.env };
    for (const [env, listed, real] of [
      [userEnv, explained.unmanagedDevices, alone],
      [jobEnv, explained.devices, withVariables],
    ] as const) {
      // With NCCL_COMM_ID the bootstrap matches a subnet instead; the transport's list is not its walk.
      if (env.NCCL_COMM_ID !== undefined) continue;
      const first = listed === undefined ? undefined : (listed[0] ?? null);
      compare(setting, 'devices', show(first), real, explained.stderr);
      implied.push({ setting, env, listed, stderr: explained.stderr });
    }
    // Where nccl-run decided and NCCL_SOCKET_IFNAME is its own, NCCL must bind the decision.
    if (explained.decision !== null && kept === null) {
      const { interface: name, address } = explained.decision;
      compare(setting, 'decision', `${name} ${address}`, withVariables, explained.stderr);
    }
  }
  // The whole lists against the source's walk over the host's getifaddrs: one python3 per layout and stack.
  const skips = ncclBehaviour(stack.nccl).interfaceRules.skipsNotRunning;
  const lists = await sourceDevices(
    lab,
    host,
    implied.map((entry) => entry.env),
    skips,
  );
  for (const [index, entry] of implied.entries()) {
    const said = showList(lists[index]);
    compare(
      entry.setting,
      'devices',
      showList(entry.listed),
      { bind: undefined, list: said, log: JSON.stringify(entry.env) },
      entry.stderr,
    );
  }
  return { found: out, plain: plain as Explained };
}

async function explain(
  lab: Lab,
  build: string,
  host: string,
  layout: FuzzLayout,
  stack: FuzzStack,
  userEnv: Record<string, string>,
): Promise<Explained> {
  const job = ['--nnodes=2', '--node_rank=1', `--master_addr=${layout.master}`];
  const run = await runNcclRun(
    build,
    lab,
    host,
    layout.spec.hostname,
    { NCCL_VERSION: stack.nccl, ...userEnv },
    ['explain', '--json', '--verify', 'none', ...job, '--master_port=29500', 'train.py'],
  );
  let json: {
    decision?: { interface: string; address: string } | null;
    env?: Record<string, string>;
    nccl?: { pick: Bind; devices?: Bind[] };
    unmanaged?: { nccl: (Bind & { devices?: Bind[] }) | null; gloo: Bind };
    error?: { message: string };
  } = {};
  try {
    json = JSON.parse(run.stdout);
  } catch {
    // No report at all: every comparison of this setting shows 'not reported'.
  }
  return {
    exitCode: run.exitCode,
    decision: run.exitCode === 0 ? (json.decision ?? null) : null,
    env: json.env ?? {},
    pick: json.nccl?.pick,
    unmanaged: json.unmanaged === undefined ? undefined : bindOf(json.unmanaged.nccl),
    devices: json.nccl?.devices,
    unmanagedDevices:
      json.unmanaged === undefined ? undefined : (json.unmanaged.nccl?.devices ?? []),
    gloo: json.unmanaged?.gloo,
    error: json.error?.message ?? (run.exitCode === 0 ? null : run.stderr),
    stderr: run.stderr,
  };
}

const bindOf = (bind: (Bind & { devices?: Bind[] }) | null): Bind =>
  bind === null ? null : { interface: bind.interface, address: bind.address };

const showList = (list: readonly Bind[] | undefined): string =>
  list === undefined
    ? 'not reported'
    : list.length === 0
      ? 'none'
      : list.map((device, index) => `[${index}]${show(device)}`).join(' ');

/** A mismatch as a reader acts on it: what differs, then the layout to replay or copy into ORACLE_LAYOUTS. */
export function describeMismatch({ comparison: c, layout, log }: Mismatch): string {
  return [
    `${c.layout} on NCCL ${c.stack}, ${c.setting}: ${c.what} is '${c.ncclRun}' by nccl-run, '${c.nccl}' by NCCL`,
    `  master ${layout.master} (${layout.placement}); layout ${JSON.stringify(layout.spec)}`,
    ...log
      .split('\n')
      .filter((line) => /NCCL (INFO|WARN) (Bootstrap|NET)|nccl-run|Gloo|"msg"|Error/.test(line))
      .slice(0, 8)
      .map((line) => `  ${line.slice(0, 300)}`),
  ].join('\n');
}
