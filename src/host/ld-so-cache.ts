/**
 * What /etc/ld.so.cache maps a library name to, as the dynamic loader reads
 * it (glibc elf/dl-cache.c _dl_load_cache_lookup; the layout is
 * sysdeps/generic/dl-cache.h): the "glibc-ld.so.cache1.1" format, alone
 * (glibc 2.32+) or after the old "ld.so-1.7.0" table. Header: magic and
 * version (20 bytes), nlibs, len_strings, flags, 3 bytes padding,
 * extension_offset, 3 unused words (48 bytes); then nlibs entries of 24
 * bytes: flags (int32), key, value (offsets of the name and the path,
 * from the header's start), osversion, hwcap (uint64). An entry serves this
 * process when its type is FLAG_ELF_LIBC6 and its arch bits are this
 * machine's (x86-64 0x0300, aarch64 0x0a00); an entry with hwcap bits set
 * is for a glibc-hwcaps subfolder, which nccl-run does not model.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from './attempt.js';

const NEW_MAGIC = 'glibc-ld.so.cache1.1';
const OLD_MAGIC = 'ld.so-1.7.0';
const HEADER_BYTES = 48;
const ENTRY_BYTES = 24;
const OLD_ENTRY_BYTES = 12;
const FLAG_ELF_LIBC6 = 0x0003;
const ARCH_FLAGS: Record<string, number> = { x64: 0x0300, arm64: 0x0a00 };

/** name → path of the cache at root/etc/ld.so.cache; empty when there is none or it cannot be read. */
export function readLdSoCache(root = '', arch: string = process.arch): Map<string, string> {
  const bytes = attempt(() => readFileSync(join(root, '/etc/ld.so.cache')));
  return bytes === undefined ? new Map() : parseLdSoCache(bytes, arch);
}

export function parseLdSoCache(bytes: Buffer, arch: string = process.arch): Map<string, string> {
  const found = new Map<string, string>();
  const start = newFormatStart(bytes);
  if (start === null || bytes.length < start + HEADER_BYTES) return found;
  const wanted = FLAG_ELF_LIBC6 | (ARCH_FLAGS[arch] ?? 0);
  const nlibs = bytes.readUInt32LE(start + 20);
  const text = (offset: number) => {
    const from = start + offset;
    const end = bytes.indexOf(0, from);
    return from < bytes.length && end !== -1 ? bytes.toString('utf8', from, end) : null;
  };
  for (let i = 0; i < nlibs; i += 1) {
    const at = start + HEADER_BYTES + i * ENTRY_BYTES;
    if (at + ENTRY_BYTES > bytes.length) break;
    if (bytes.readInt32LE(at) !== wanted || bytes.readBigUInt64LE(at + 16) !== 0n) continue;
    const name = text(bytes.readUInt32LE(at + 4));
    const path = text(bytes.readUInt32LE(at + 8));
    // The loader's binary search meets the first of equal keys (they are sorted); keep it.
    if (name !== null && path !== null && !found.has(name)) found.set(name, path);
  }
  return found;
}

/** Where the new format's header starts: 0, or after the old format's table (aligned as glibc writes it). */
function newFormatStart(bytes: Buffer): number | null {
  if (bytes.toString('latin1', 0, NEW_MAGIC.length) === NEW_MAGIC) return 0;
  if (bytes.toString('latin1', 0, OLD_MAGIC.length) !== OLD_MAGIC || bytes.length < 16) return null;
  const oldEnd = 16 + bytes.readUInt32LE(12) * OLD_ENTRY_BYTES;
  const aligned = Math.ceil(oldEnd / 8) * 8;
  for (const at of [oldEnd, aligned]) {
    if (bytes.toString('latin1', at, at + NEW_MAGIC.length) === NEW_MAGIC) return at;
  }
  return null;
}
