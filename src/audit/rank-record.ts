/**
 * Per process (host, pid): what NCCL said it used. One NCCL rank is one
 * process under torchrun; the CUDA device is the one its data-plane lines
 * name (its first lines may still say [0], before torch sets the device).
 * JSON names follow explain --json (`interface`, `address`, `nccl.version`)
 * so that explain's `nccl.pick` and audit's `nccl.bootstrap` sit side by side.
 */
import {
  type Bound,
  type Channel,
  type IbDevice,
  type NcclEvent,
  type PluginState,
  recogniseInfo,
  type SocketDevice,
} from './nccl-events.js';
import { type BareVersion, type NcclLine, readBareVersion, readNcclLine } from './nccl-line.js';

export interface Evidence {
  /** Where the line was read: a file, or `-` for standard input. */
  source: string;
  line: number;
  text: string;
}

export interface RankRecord {
  host: string;
  pid: number;
  device: number;
  /** NCCL's rank and the communicator's size, from `Init COMPLETE`; null before it. */
  rank: number | null;
  nranks: number | null;
  nccl: {
    version: string | null;
    bootstrap: Bound | null;
    /** What `Using network` named: `Socket`, `IB`, a plugin's name; null when never reached. */
    network: string | null;
    plugin: { state: PluginState; name: string | null } | null;
    devices: { socket: SocketDevice[] | null; ib: IbDevice[] | null };
    channels: Channel[];
  };
  /** The user's settings NCCL echoed (`NCCL_X set by environment to V`). */
  settings: Record<string, string>;
  /** The text of each NCCL WARN line. */
  warnings: string[];
  /** How many times NCCL said it retried a connect. */
  retries: number;
  /** The line behind each fact, for the findings that quote it. */
  evidence: Partial<Record<NcclEvent['kind'], Evidence>>;
  /** The line of each WARN, beside `warnings`. */
  warningLines: Evidence[];
}

export interface NcclLog {
  ranks: RankRecord[];
  /** `NCCL version` lines with no header (rank 0's stdout): a version for ranks that logged none. */
  bareVersions: BareVersion[];
  /** How many lines carried NCCL's INFO header. */
  infoLines: number;
}

export interface SourceText {
  source: string;
  text: string;
}

export function readNcclLog(sources: readonly SourceText[]): NcclLog {
  const byProcess = new Map<string, RankRecord>();
  const bareVersions: BareVersion[] = [];
  let infoLines = 0;
  for (const { source, text } of sources) {
    text.split('\n').forEach((raw, index) => {
      const line = readNcclLine(raw);
      if (line === null) {
        const bare = readBareVersion(raw);
        if (bare !== null) bareVersions.push(bare);
        return;
      }
      if (line.level === 'INFO') infoLines += 1;
      const key = `${line.host}\0${line.pid}`;
      let record = byProcess.get(key);
      if (record === undefined) {
        record = emptyRecord(line);
        byProcess.set(key, record);
      }
      apply(record, line, { source, line: index + 1, text: line.text });
    });
  }
  const ranks = [...byProcess.values()];
  const bare = [...new Set(bareVersions.map((v) => v.version))];
  if (bare.length === 1) for (const rank of ranks) rank.nccl.version ??= bare[0] as string;
  return { ranks: ranks.sort(byRank), bareVersions, infoLines };
}

/**
 * The one process whose lines `text` holds (a file NCCL_DEBUG_FILE wrote,
 * `%h.%p.log`); a record with nothing known when it holds no NCCL line.
 */
export function readOneProcess(text: string, source = '-'): RankRecord {
  return readNcclLog([{ source, text }]).ranks[0] ?? emptyRecord({ host: '', pid: 0, device: -1 });
}

function emptyRecord(line: Pick<NcclLine, 'host' | 'pid' | 'device'>): RankRecord {
  return {
    host: line.host,
    pid: line.pid,
    device: line.device,
    rank: null,
    nranks: null,
    nccl: {
      version: null,
      bootstrap: null,
      network: null,
      plugin: null,
      devices: { socket: null, ib: null },
      channels: [],
    },
    settings: {},
    warnings: [],
    retries: 0,
    evidence: {},
    warningLines: [],
  };
}

function apply(record: RankRecord, line: NcclLine, evidence: Evidence): void {
  const event: NcclEvent | null =
    line.level === 'WARN' ? { kind: 'warn' } : recogniseInfo(line.message);
  if (event === null) return;
  // The first line of a kind is the evidence: NCCL prints its devices and bootstrap once per process.
  if (record.evidence[event.kind] === undefined) record.evidence[event.kind] = evidence;
  const { nccl } = record;
  switch (event.kind) {
    case 'version':
      nccl.version ??= event.version;
      break;
    case 'bootstrap':
      nccl.bootstrap ??= event.bound;
      break;
    case 'socketDevices':
      nccl.devices.socket ??= event.devices;
      break;
    case 'ibDevices':
      nccl.devices.ib ??= event.devices;
      break;
    case 'network':
      nccl.network ??= event.name;
      record.device = line.device;
      break;
    case 'plugin':
      // A failure outranks what came before it (a plugin that loaded and then did not initialise).
      if (nccl.plugin === null || event.state === 'failed' || nccl.plugin.state === 'absent') {
        nccl.plugin = { state: event.state, name: event.name ?? nccl.plugin?.name ?? null };
        record.evidence.plugin = evidence;
      }
      break;
    case 'channel':
      nccl.channels.push(event.channel);
      record.device = line.device;
      break;
    case 'setting':
      record.settings[event.name] = event.value;
      break;
    case 'rank':
      record.rank = event.rank;
      record.nranks = event.nranks;
      break;
    case 'retry':
      record.retries += 1;
      break;
    case 'warn':
      record.warnings.push(line.message);
      record.warningLines.push(evidence);
      break;
  }
}

function byRank(a: RankRecord, b: RankRecord): number {
  return (
    (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER) ||
    a.host.localeCompare(b.host) ||
    a.pid - b.pid
  );
}

/** How a rank is named in a message: `rank 3 (node1 pid 4711 GPU 3)`, or without a rank number before Init COMPLETE. */
export function rankName(rank: RankRecord): string {
  const where = `${rank.host} pid ${rank.pid} GPU ${rank.device}`;
  return rank.rank === null ? where : `rank ${rank.rank} (${where})`;
}
