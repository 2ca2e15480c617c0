/**
 * Slurm's hostlist syntax, read as libslurm's hostlist_create() reads it
 * (SchedMD/slurm src/common/hostlist.c: _next_tok, _parse_single_range,
 * _push_range_list, _hostlist_create_bracketed):
 *
 * - hosts are separated by `,`, space or tab outside brackets; empty items are skipped;
 * - `prefix[ranges]` where ranges is a comma list of `N` or `LO-HI`, digits only;
 * - the zero padding of a range is the width of its low bound: `n[01-10]` gives
 *   n01..n10, `n[8-10]` gives n8, n9, n10 (`range->width = strlen(lo)`);
 * - several bracket groups in one name (`rack[1-2]-n[01-02]`); text may follow
 *   a `]` only when another group follows, Slurm rejects `n[1-2]x`;
 * - a range may hold at most 65536 hosts (MAX_RANGE), a group before the last
 *   at most 65536 values (MAX_PREFIX_CNT).
 *
 * Where libslurm silently accepts nonsense (a `[` with no `]` gets a `]`
 * appended, `n[1-]` reads as n1 through strtoul), we reject it instead: a
 * node list that is not what the user meant must not pick a master.
 */

const SEPARATORS = new Set([',', ' ', '\t']);
/** MAX_RANGE and MAX_PREFIX_CNT in hostlist.c (64K). */
const MAX_HOSTS_PER_RANGE = 65_536n;
/** Not Slurm's: a bound on the whole expansion, far above any real allocation. */
const MAX_HOSTS = 65_536;

interface Range {
  lo: bigint;
  hi: bigint;
  /** Digits of the low bound: every value is zero-padded to it (Slurm's padding rule). */
  width: number;
}

type Part = { text: string } | { ranges: Range[] };

/** Expands a Slurm hostlist (node[01-04,07],login1) into host names, in Slurm's order. */
export function expandHostlist(text: string): string[] {
  const hosts: string[] = [];
  for (const token of splitTokens(text)) {
    for (const host of expandToken(token)) {
      hosts.push(host);
      if (hosts.length > MAX_HOSTS) {
        throw new Error(`the list expands to more than ${MAX_HOSTS} hosts`);
      }
    }
  }
  return hosts;
}

/** _next_tok: separators split the text, except inside brackets. */
function splitTokens(text: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '[') {
      if (open !== -1) throw new Error(`nested '[' in '${text}' at position ${i + 1}`);
      open = i;
    } else if (char === ']') {
      if (open === -1) throw new Error(`']' without '[' in '${text}' at position ${i + 1}`);
      open = -1;
    } else if (open === -1 && SEPARATORS.has(char)) {
      if (current !== '') tokens.push(current);
      current = '';
      continue;
    }
    current += char;
  }
  if (open !== -1) throw new Error(`'[' at position ${open + 1} of '${text}' is never closed`);
  if (current !== '') tokens.push(current);
  return tokens;
}

function expandToken(token: string): string[] {
  const parts: Part[] = [];
  for (const piece of token.split(/(\[[^\]]*\])/)) {
    if (piece.startsWith('[')) parts.push({ ranges: parseRanges(piece.slice(1, -1), token) });
    else if (piece !== '') parts.push({ text: piece });
  }
  const groups = parts.filter((part): part is { ranges: Range[] } => 'ranges' in part);
  if (groups.length === 0) return [token];
  const tail = parts.at(-1);
  if (tail !== undefined && 'text' in tail) {
    throw new Error(
      `'${tail.text}' after the last ']' in '${token}': Slurm allows text after ']' only before another [...] group`,
    );
  }
  let total = 1n;
  for (const [index, group] of groups.entries()) {
    const count = countHosts(group.ranges);
    if (index < groups.length - 1 && count > MAX_HOSTS_PER_RANGE) {
      throw new Error(
        `a group in '${token}' holds more than ${MAX_HOSTS_PER_RANGE} values (Slurm's limit)`,
      );
    }
    total *= count;
  }
  if (total > BigInt(MAX_HOSTS)) {
    throw new Error(`'${token}' expands to ${total} hosts, more than ${MAX_HOSTS}`);
  }

  const values = groups.map((group) => group.ranges.flatMap(formatRange));
  let combos: string[][] = [[]];
  for (const groupIndex of slurmOrder(groups.length)) {
    combos = combos.flatMap((combo) =>
      (values[groupIndex] as string[]).map((value) => {
        const next = [...combo];
        next[groupIndex] = value;
        return next;
      }),
    );
  }
  return combos.map((combo) => {
    let groupIndex = 0;
    return parts.map((part) => ('text' in part ? part.text : combo[groupIndex++])).join('');
  });
}

/**
 * The order libslurm produces: the last group varies fastest; the groups
 * before it are expanded by _push_range_list recursing from the right-most
 * one, so for `a[..]b[..]c[..]` the middle group varies slowest, then the
 * first, then the last. With two groups (`rack[1-2]-n[01-02]`) the left one
 * varies slowest.
 */
function slurmOrder(groupCount: number): number[] {
  const prefixGroups = Array.from({ length: groupCount - 1 }, (_, i) => groupCount - 2 - i);
  return [...prefixGroups, groupCount - 1];
}

/** _parse_range_list and _parse_single_range, digits only. */
function parseRanges(body: string, token: string): Range[] {
  return body.split(',').map((item) => {
    const match = /^(\d+)(?:-(\d+))?$/.exec(item);
    if (match === null) {
      const what = item === '' ? 'an empty range' : `range '${item}'`;
      throw new Error(
        `${what} in '${token}': expected N or LO-HI with digits only, e.g. node[01-04,07]`,
      );
    }
    const [, low = '', high] = match;
    const range = { lo: BigInt(low), hi: BigInt(high ?? low), width: low.length };
    if (range.lo > range.hi) {
      throw new Error(`range '${item}' in '${token}' runs backwards; write LO-HI with LO <= HI`);
    }
    if (range.hi - range.lo + 1n > MAX_HOSTS_PER_RANGE) {
      throw new Error(
        `range '${item}' in '${token}' holds more than ${MAX_HOSTS_PER_RANGE} hosts (Slurm's limit)`,
      );
    }
    return range;
  });
}

function formatRange(range: Range): string[] {
  const values: string[] = [];
  for (let value = range.lo; value <= range.hi; value++) values.push(pad(value, range.width));
  return values;
}

function countHosts(ranges: Range[]): bigint {
  return ranges.reduce((sum, r) => sum + r.hi - r.lo + 1n, 0n);
}

function pad(value: bigint, width: number): string {
  return value.toString().padStart(width, '0');
}
