/**
 * Bytes that need not be UTF-8 (an env file's values, the kernel's own
 * environment) carried in ordinary strings, Python's surrogateescape: valid
 * UTF-8 decodes as usual, and each byte that is not part of it becomes the
 * lone surrogate U+DC80 + byte, which no decoded text holds, so encoding
 * gives back the very bytes. Everything between reading and the hand-over
 * stays a plain string; only the ends see bytes.
 */

const ESCAPE_BASE = 0xdc00;
const strict = new TextDecoder('utf-8', { fatal: true });

export function decodeBytes(bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch {
    return decodeByRuns(bytes);
  }
}

export function encodeBytes(text: string): Buffer {
  if (!/[\udc80-\udcff]/.test(text)) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let run = '';
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (char.length === 1 && code >= 0xdc80 && code <= 0xdcff) {
      parts.push(Buffer.from(run, 'utf8'), Buffer.of(code - ESCAPE_BASE));
      run = '';
    } else {
      run += char;
    }
  }
  parts.push(Buffer.from(run, 'utf8'));
  return Buffer.concat(parts);
}

/** The slow path: the longest valid sequences decoded, every other byte escaped. */
function decodeByRuns(bytes: Uint8Array): string {
  let text = '';
  let index = 0;
  while (index < bytes.length) {
    const length = sequenceLength(bytes, index);
    if (length === 0) {
      text += String.fromCharCode(ESCAPE_BASE + (bytes[index] as number));
      index += 1;
    } else {
      text += strict.decode(bytes.subarray(index, index + length));
      index += length;
    }
  }
  return text;
}

/** The length of the valid UTF-8 sequence at `index` (RFC 3629 table), 0 if there is none. */
function sequenceLength(bytes: Uint8Array, index: number): number {
  const lead = bytes[index] as number;
  if (lead < 0x80) return 1;
  // The range the second byte must fall in excludes overlong forms, surrogates and > U+10FFFF.
  const [length, low, high] =
    lead >= 0xc2 && lead <= 0xdf
      ? [2, 0x80, 0xbf]
      : lead === 0xe0
        ? [3, 0xa0, 0xbf]
        : lead === 0xed
          ? [3, 0x80, 0x9f]
          : lead >= 0xe1 && lead <= 0xef
            ? [3, 0x80, 0xbf]
            : lead === 0xf0
              ? [4, 0x90, 0xbf]
              : lead === 0xf4
                ? [4, 0x80, 0x8f]
                : lead >= 0xf1 && lead <= 0xf3
                  ? [4, 0x80, 0xbf]
                  : [0, 0, 0];
  if (length === 0 || index + length > bytes.length) return 0;
  const second = bytes[index + 1] as number;
  if (second < low || second > high) return 0;
  for (let next = index + 2; next < index + length; next += 1) {
    const byte = bytes[next] as number;
    if (byte < 0x80 || byte > 0xbf) return 0;
  }
  return length;
}
