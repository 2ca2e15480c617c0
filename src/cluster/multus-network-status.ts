/**
 * Multus' account of a pod's networks (--network-status): the
 * `k8s.v1.cni.cncf.io/network-status` annotation (the Network Plumbing
 * Working Group's "network attachment status"), which Multus writes on the
 * pod once its CNI calls have attached every network. A pod sees it only
 * through the downward API, and only as a volume file: an environment
 * variable is read once, before Multus has written it (multus-cni#1113).
 *
 * The file is either every annotation, as kubelet writes `metadata.annotations`
 * (one `key="value"` line each, the value quoted as Go's %q quotes it:
 * kubernetes pkg/fieldpath FormatMap), or the one annotation's JSON, as a
 * volume item of `metadata.annotations['k8s.v1.cni.cncf.io/network-status']`
 * writes it. Kubelet writes the file before the pod's networks exist and
 * refreshes it later (its periodic sync; no cluster here to time it), so a pod that asked
 * for networks (`k8s.v1.cni.cncf.io/networks`) may start before their status
 * is there: that is waited for, up to --verify-timeout.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../errors.js';

export const NETWORK_STATUS_KEY = 'k8s.v1.cni.cncf.io/network-status';
/** The plural spelling Multus 3.x also wrote, kept by old clusters (multus-cni#468). */
const LEGACY_STATUS_KEY = 'k8s.v1.cni.cncf.io/networks-status';
/** The pod's request for secondary networks, set by the user in the pod's spec. */
export const NETWORKS_REQUEST_KEY = 'k8s.v1.cni.cncf.io/networks';

/** One network Multus attached: its NetworkAttachmentDefinition, the pod's interface, its addresses. */
export interface AttachedNetwork {
  name: string;
  /** The interface in the pod (`eth0`, `net1`); Multus leaves it out for some default networks. */
  interface: string | null;
  ips: string[];
  /** The cluster's pod network (the one Services and the master's name are on). */
  default: boolean;
}

/** What --network-status said, as the strategy reads it. */
export type NetworkStatus =
  | { file: string; kind: 'attached'; networks: AttachedNetwork[] }
  /** The pod asked for no secondary networks: nothing to wait for. */
  | { file: string; kind: 'none requested' }
  /** The pod asked for networks (`request`), and their status did not come within the wait. */
  | { file: string; kind: 'not written'; request: string | null; waitedMs: number };

const entrySchema = z.looseObject({
  name: z.string(),
  interface: z.string().optional(),
  ips: z.array(z.string()).optional(),
  default: z.boolean().optional(),
});

/**
 * The file's annotations: every `key="value"` line, unquoted; or, for a file
 * that is the status JSON alone, that under NETWORK_STATUS_KEY. An empty file
 * has none.
 */
export function parseAnnotationFile(text: string, file: string): Map<string, string> {
  const trimmed = text.trim();
  if (trimmed === '') return new Map();
  if (trimmed.startsWith('[')) return new Map([[NETWORK_STATUS_KEY, trimmed]]);
  const annotations = new Map<string, string>();
  for (const [index, line] of trimmed.split('\n').entries()) {
    const match = /^([^=\s]+)="(.*)"$/.exec(line.trim());
    if (match === null || match[1] === undefined || match[2] === undefined) {
      throw new ConfigError(
        `--network-status ${file}: line ${index + 1} is not key="value" as kubelet writes annotations (${JSON.stringify(line.slice(0, 80))}); mount metadata.annotations through the downward API`,
      );
    }
    annotations.set(match[1], unquoteGo(match[2], file));
  }
  return annotations;
}

/** The attached networks, from the status annotation's JSON. */
export function parseNetworkStatus(json: string, file: string): AttachedNetwork[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new ConfigError(
      `--network-status ${file}: ${NETWORK_STATUS_KEY} is not JSON (${(error as Error).message})`,
    );
  }
  const parsed = z.array(entrySchema).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      `--network-status ${file}: ${NETWORK_STATUS_KEY} is not a list of networks with a name (${issue?.path.join('.') || 'the value'}: ${issue?.message})`,
    );
  }
  return parsed.data.map((entry) => ({
    name: entry.name,
    interface: entry.interface ?? null,
    ips: entry.ips ?? [],
    default: entry.default === true,
  }));
}

/** One reading of the file, or the error that says why it cannot be read. */
export async function readNetworkStatusOnce(
  file: string,
): Promise<NetworkStatus | { file: string; kind: 'pending'; request: string | null }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError(
      `--network-status ${file} cannot be read (${code}): mount the pod's annotations there through the downward API (the k8s template shows how), or drop the option`,
    );
  }
  const annotations = parseAnnotationFile(text, file);
  const status = annotations.get(NETWORK_STATUS_KEY) ?? annotations.get(LEGACY_STATUS_KEY);
  if (status !== undefined)
    return { file, kind: 'attached', networks: parseNetworkStatus(status, file) };
  const request = annotations.get(NETWORKS_REQUEST_KEY) ?? null;
  // Every annotation but the status is there from the start: with no
  // request, none will come. A file of the status alone cannot tell, so waits.
  if (annotations.size > 0 && request === null) return { file, kind: 'none requested' };
  return { file, kind: 'pending', request };
}

/**
 * The file's status, waiting while the pod's networks are requested but
 * their status is not yet written, re-reading every `pollMs`, up to `waitMs`.
 */
export async function readNetworkStatus(
  file: string,
  options: { waitMs: number; pollMs?: number; onWait?: (request: string | null) => void },
): Promise<NetworkStatus> {
  const started = performance.now();
  const pollMs = options.pollMs ?? 1_000;
  for (let first = true; ; first = false) {
    const reading = await readNetworkStatusOnce(file);
    if (reading.kind !== 'pending') return reading;
    const waitedMs = performance.now() - started;
    if (waitedMs >= options.waitMs) {
      return {
        file,
        kind: 'not written',
        request: reading.request,
        waitedMs: Math.round(waitedMs),
      };
    }
    if (first) options.onWait?.(reading.request);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(pollMs, options.waitMs - waitedMs)),
    );
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
  "'": "'",
};

/**
 * A Go %q string's body, unquoted (strconv.Unquote's escapes: \a \b \f \n
 * \r \t \v \\ \" \xHH \uHHHH \UHHHHHHHH and octal \OOO). \x and octal
 * escapes are bytes; a JSON annotation has none but in its strings.
 */
export function unquoteGo(body: string, file: string): string {
  const bytes: number[] = [];
  const pushText = (text: string) => bytes.push(...Buffer.from(text, 'utf8'));
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      const code = body.codePointAt(i) as number;
      pushText(String.fromCodePoint(code));
      if (code > 0xffff) i++;
      continue;
    }
    const e = body[i + 1] ?? '';
    const bad = (): never => {
      throw new ConfigError(
        `--network-status ${file}: bad escape '\\${e}' in a quoted annotation value; expected the escapes Go's %q writes`,
      );
    };
    const hex = (n: number) => {
      const digits = body.slice(i + 2, i + 2 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits)) bad();
      i += 1 + n;
      return Number.parseInt(digits, 16);
    };
    if (e in SIMPLE_ESCAPES) {
      pushText(SIMPLE_ESCAPES[e] as string);
      i++;
    } else if (e === 'x') bytes.push(hex(2));
    else if (e === 'u') pushText(String.fromCodePoint(hex(4)));
    else if (e === 'U') {
      const code = hex(8);
      if (code > 0x10ffff) bad();
      pushText(String.fromCodePoint(code));
    } else if (/[0-7]/.test(e)) {
      const digits = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(digits)) bad();
      bytes.push(Number.parseInt(digits, 8));
      i += 3;
    } else bad();
  }
  return Buffer.from(bytes).toString('utf8');
}
