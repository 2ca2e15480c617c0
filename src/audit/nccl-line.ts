/**
 * One line of NCCL's own log, found inside whatever the launcher put before
 * it (torchrun's `[rank0]:` or `[default0]:`, Slurm's `0: `, mpirun's
 * `host: `, a collector's timestamp and `|`). NCCL's header is debug.cc's
 * ncclDebugLog, the same at every release modelled (NVIDIA/nccl v2.18.6-1 to
 * v2.29.7-1, src/debug.cc):
 *
 *   host:pid:tid [cudaDev] NCCL INFO message
 *   host:pid:tid [cudaDev] file.cc:123 NCCL WARN message
 *
 * From v2.26.2-1 a timestamp may precede `host` (NCCL_DEBUG_TIMESTAMP_FORMAT,
 * `[%F %T] ` on WARN lines by default); up to v2.25 a WARN line begins with
 * a newline, so the header opens the next line. Either way it is a prefix.
 * Rank 0 also prints `NCCL version X` without any header (init.cc
 * showVersion, stdout), which nccl-tests' and torch's logs show bare.
 */

export type NcclLevel = 'INFO' | 'WARN';

export interface NcclLine {
  host: string;
  pid: number;
  /** The CUDA device NCCL named in brackets (-1 before one is set). */
  device: number;
  level: NcclLevel;
  /** What NCCL printed after `NCCL INFO ` / `NCCL WARN `. */
  message: string;
  /** The whole line as read, for the evidence a finding quotes. */
  text: string;
}

/** A line that is only `NCCL version X.Y.Z+cudaA.B` (init.cc showVersion on stdout). */
export interface BareVersion {
  version: string;
  text: string;
}

// A host name is letters, digits, `-`, `.` and `_` (RFC 1123, and what
// gethostname gives inside containers), so a launcher's `[rank0]:` or
// `node1: ` before it never joins the name.
const HEADER =
  /(?:^|[^\w.-])([\w.-]+):(\d+):\d+ \[(-?\d+)\] (?:\S+:\d+ )?NCCL (INFO|WARN) ?(.*?)\s*$/;
const BARE_VERSION = /(?:^|[\s:|\]])NCCL version (\d+\.\d+\.\d+)\S*\s*$/;

export function readNcclLine(text: string): NcclLine | null {
  const header = HEADER.exec(text);
  if (header === null) return null;
  return {
    host: header[1] as string,
    pid: Number(header[2]),
    device: Number(header[3]),
    level: header[4] as NcclLevel,
    message: header[5] as string,
    text: text.trimEnd(),
  };
}

export function readBareVersion(text: string): BareVersion | null {
  if (HEADER.test(text)) return null;
  const version = BARE_VERSION.exec(text)?.[1];
  return version === undefined ? null : { version, text: text.trim() };
}
