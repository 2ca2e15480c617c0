/**
 * Where the job's nodes meet: run.py `get_rdzv_endpoint` gives the static
 * backend `f"{master_addr}:{master_port}"` unless --rdzv-endpoint is set, and
 * every other backend its --rdzv-endpoint; each backend then reads that with
 * `parse_rendezvous_endpoint` and its own default port.
 */
import type { ClusterInfo } from '../cluster/scheduler.js';
import { badValue } from '../errors.js';
import type { Origin, Setting } from '../origin.js';
import { parsePythonInt } from '../torch/python-builtins.js';
import type { TorchrunArgs } from '../torch/torchrun-args.js';
import { torchrunSetting } from '../torch/torchrun-environment.js';
import type { RendezvousEndpoint } from './job-shape.js';
import { readRendezvousEndpoint } from './rendezvous-endpoint.js';
import { clusterSetting, DEFAULT_ORIGIN, defaultSetting } from './setting.js';

export interface MasterReading {
  master: RendezvousEndpoint | null;
  /** The host the master's name resolves from, for the "two networks" warning (JobShape.masterAddr). */
  masterAddr: string | null;
  /** PET_MASTER_ADDR / PET_MASTER_PORT to export. */
  fill: Record<string, string>;
}

const PORT_RANGE = 'expected a port, 1-65535';

/** What nccl-run says to a port-0 static rendezvous whose torch's workers would wait for ever. */
function staticPortZero(args: TorchrunArgs): string {
  const spelled = (dest: string) => args.table.byDest.get(dest)?.strings[0] ?? `--${dest}`;
  return `torchrun's static rendezvous tells its workers MASTER_PORT=0 and they wait for ever; for a port torch picks on one node use ${spelled('rdzv_backend')}=c10d ${spelled('rdzv_endpoint')}=localhost:0, else give a fixed port`;
}

export function readMaster(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  rendezvous: { backend: string; standalone: boolean },
  cluster: ClusterInfo | null,
): MasterReading {
  const { backend, standalone } = rendezvous;
  const endpoint = torchrunSetting(args, env, 'rdzv_endpoint');
  const masterAddr = torchrunSetting(args, env, 'master_addr');
  // run.py run(): --standalone replaces backend and endpoint with c10d on a
  // free localhost port (localhost:29400 in torch 1.13, localhost:0 on main).
  if (standalone) return { master: null, masterAddr: masterAddr?.value || null, fill: {} };
  // run.py tests `not args.rdzv_endpoint`: an empty endpoint is no endpoint.
  const given = endpoint !== null && endpoint.value !== '' ? endpoint : null;
  if (backend === 'static') {
    if (given === null) return staticMaster(args, env, cluster);
    // static_tcp_rendezvous.py: parse_rendezvous_endpoint(endpoint, -1), and no port is an error.
    const master = endpointMaster(given, null, true);
    if (master?.port === 0 && args.table.staticPortZero === 'hangs') {
      throw badValue(given.origin, given.value, staticPortZero(args));
    }
    return { master, masterAddr: master?.host ?? null, fill: {} };
  }
  // Other backends are plugins whose endpoint format nccl-run cannot know.
  const defaultPort = args.table.defaults.endpointPorts.get(backend) ?? null;
  const master =
    given === null
      ? defaultPort === null
        ? null
        : { host: 'localhost', port: defaultPort, ...bothFrom(DEFAULT_ORIGIN) }
      : endpointMaster(given, defaultPort, defaultPort !== null);
  return { master, masterAddr: masterAddr?.value || null, fill: {} };
}

function endpointMaster(
  endpoint: Setting,
  defaultPort: number | null,
  known: boolean,
): RendezvousEndpoint | null {
  const reading = readRendezvousEndpoint(endpoint.value);
  if (reading.problem !== undefined) {
    if (!known) return null;
    throw badValue(endpoint.origin, endpoint.value, reading.problem);
  }
  if (reading.port !== null) {
    return { host: reading.host, port: reading.port, ...bothFrom(endpoint.origin) };
  }
  if (defaultPort !== null) {
    return {
      host: reading.host,
      port: defaultPort,
      origin: endpoint.origin,
      portOrigin: DEFAULT_ORIGIN,
    };
  }
  if (!known) return null;
  throw badValue(
    endpoint.origin,
    endpoint.value,
    'the static backend needs a port: expected HOST:PORT',
  );
}

/**
 * The static backend's master: torchrun's own --master-addr/--master-port
 * (command line, then PET_MASTER_ADDR/PET_MASTER_PORT), then MASTER_ADDR /
 * MASTER_PORT, then the cluster, then torchrun's defaults.
 *
 * torchrun itself never reads MASTER_ADDR/MASTER_PORT: its agent writes them
 * into each worker's environment, from the store it rendezvoused at. We read
 * them anyway, because whoever set them around torchrun (an sbatch script,
 * Kubeflow's operator) names the master with them. torchrun only follows
 * what it is given as PET_*, so a value the cluster supplied is exported as
 * PET_MASTER_ADDR/PET_MASTER_PORT when torchrun would not otherwise get one;
 * the value exported is the one read here (for both Slurm and Kubeflow the
 * cluster's port is MASTER_PORT when set, and Kubeflow's master is
 * MASTER_ADDR). MASTER_* without a cluster is exported the same way: SPEC
 * only names the cluster, but leaving torchrun on 127.0.0.1:29500 while we
 * verified MASTER_ADDR would launch a different job than the one checked.
 */
function staticMaster(
  args: TorchrunArgs,
  env: NodeJS.ProcessEnv,
  cluster: ClusterInfo | null,
): MasterReading {
  const host = firstOf(
    torchrunSetting(args, env, 'master_addr'),
    fromEnv(env, 'MASTER_ADDR'),
    clusterSetting(cluster, cluster?.masterHost),
    defaultSetting(args.table.defaults.masterAddr),
  );
  const port = firstOf(
    torchrunSetting(args, env, 'master_port'),
    fromEnv(env, 'MASTER_PORT'),
    clusterSetting(cluster, cluster?.masterPort),
    defaultSetting(String(args.table.defaults.masterPort)),
  );

  const portNumber = parsePythonInt(port.value);
  if (portNumber === 0 && args.table.staticPortZero === 'hangs') {
    throw badValue(port.origin, port.value, staticPortZero(args));
  }
  if (portNumber === null || portNumber < 1 || portNumber > 65_535) {
    throw badValue(port.origin, port.value, PORT_RANGE);
  }
  // run.py joins them as f"{master_addr}:{master_port}" and reads that back,
  // which is how both `[fd00::1]` and a bare `fd00::1` work as --master-addr.
  const reading = readRendezvousEndpoint(`${host.value}:${portNumber}`);
  if (reading.problem !== undefined) {
    throw badValue(
      host.origin,
      host.value,
      'expected a host name, an IPv4 address or an IPv6 address, without a port',
    );
  }

  const fill: Record<string, string> = {};
  if (exportable(host.origin)) fill.PET_MASTER_ADDR = host.value;
  if (exportable(port.origin)) fill.PET_MASTER_PORT = String(portNumber);
  return {
    master: { host: reading.host, port: portNumber, origin: host.origin, portOrigin: port.origin },
    masterAddr: reading.host,
    fill,
  };
}

/** One setting gave host and port. */
function bothFrom(origin: Origin): Pick<RendezvousEndpoint, 'origin' | 'portOrigin'> {
  return { origin, portOrigin: origin };
}

/**
 * Where an endpoint came from, as explain prints it: "--master-addr",
 * "MASTER_ADDR, port MASTER_PORT", "--rdzv-endpoint, port default".
 */
export function endpointSource({
  origin,
  portOrigin,
}: Pick<RendezvousEndpoint, 'origin' | 'portOrigin'>): string {
  return origin.name === portOrigin.name ? origin.name : `${origin.name}, port ${portOrigin.name}`;
}

/** Read from MASTER_* or the cluster, which torchrun does not read. */
function exportable(origin: Origin): boolean {
  return origin.from === 'env' || origin.from === 'cluster';
}

function fromEnv(env: NodeJS.ProcessEnv, name: string): Setting | null {
  const value = env[name]?.trim();
  return value ? { value, origin: { name, from: 'env' } } : null;
}

function firstOf(...settings: [...(Setting | null)[], Setting]): Setting {
  return settings.find((setting) => setting !== null) as Setting;
}
