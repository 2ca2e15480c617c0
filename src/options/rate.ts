/**
 * Parses a throughput for --min-bandwidth (SPEC "Options": `500mbit`,
 * `10gbit`, `2GB/s`) into megabits per second, or null. The unit is
 * required: a bare 500 could be bits or bytes, per second or per
 * anything, and a wrong guess fails or passes a job by a factor of eight.
 *
 * Spellings: tc's bit rates (`kbit`, `mbit`, `gbit`, `tbit`, any case; SI
 * multiples, as tc-tbf(8) reads them) and per-second forms where `B` is a
 * byte and `b` a bit (`2GB/s`, `100Mb/s`). tc's own `mbps` means megaBYTES,
 * a trap this parser does not offer.
 */
const BIT_RATE = /^(k|m|g|t)?bit$/i;
const PER_SECOND = /^([kKMGT])?([bB])\/s$/;
const SI = { '': 1e-6, k: 1e-3, m: 1, g: 1e3, t: 1e6 } as const;

export function parseRate(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)\s*(\S+)$/.exec(text.trim());
  if (!match) return null;
  const value = Number(match[1]);
  const unit = match[2] as string;
  let mbps: number | null = null;
  const bits = BIT_RATE.exec(unit);
  if (bits) mbps = value * SI[(bits[1] ?? '').toLowerCase() as keyof typeof SI];
  const perSecond = PER_SECOND.exec(unit);
  if (perSecond) {
    const multiple = SI[(perSecond[1] ?? '').toLowerCase() as keyof typeof SI];
    mbps = value * multiple * (perSecond[2] === 'B' ? 8 : 1);
  }
  return mbps !== null && mbps > 0 ? mbps : null;
}
