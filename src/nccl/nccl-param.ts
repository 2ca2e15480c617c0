/**
 * An integer parameter as NCCL reads it (src/misc/param.cc ncclLoadParam,
 * v2.22.3-1, behind every NCCL_PARAM): unset or empty gives the default;
 * otherwise strtoll(value, NULL, 0), which skips leading blanks, takes a sign,
 * reads 0x… as hex and 0… as octal, stops at the first other character and
 * gives 0 when no digit comes; only an overflow (errno) falls back to the default.
 */
export function ncclIntParam(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const match = /^[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|0([0-7]*)|([1-9]\d*))/.exec(value);
  if (match === null) return 0;
  const [, sign, hex, octal, decimal] = match;
  const magnitude =
    hex !== undefined
      ? BigInt(`0x${hex}`)
      : octal !== undefined
        ? BigInt(`0o${octal || '0'}`)
        : BigInt(decimal ?? '0');
  const signed = sign === '-' ? -magnitude : magnitude;
  return signed > INT64_MAX || signed < -INT64_MAX - 1n ? fallback : Number(signed);
}

const INT64_MAX = 2n ** 63n - 1n;
