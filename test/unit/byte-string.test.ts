/**
 * Bytes in strings (src/byte-string.ts): every byte string survives
 * decode → encode, and text that is UTF-8 decodes as TextDecoder decodes it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBytes, encodeBytes } from '../../src/byte-string.js';

describe('byte strings', () => {
  it('gives back every byte sequence it decoded', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(encodeBytes(decodeBytes(bytes))).toEqual(Buffer.from(bytes));
      }),
      { numRuns: 5_000 },
    );
  });

  it('decodes UTF-8 as UTF-8, and escapes only the bytes that are not', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 32 }), (text) => {
        expect(decodeBytes(Buffer.from(text, 'utf8'))).toBe(text);
      }),
    );
    expect(decodeBytes(Buffer.from('caf\xe9 \xff!', 'latin1'))).toBe('caf\udce9 \udcff!');
    // An overlong '/', a surrogate, and a truncated sequence are not UTF-8.
    expect(decodeBytes(Buffer.from([0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xe2, 0x82]))).toBe(
      '\udcc0\udcaf\udced\udca0\udc80\udce2\udc82',
    );
  });
});
