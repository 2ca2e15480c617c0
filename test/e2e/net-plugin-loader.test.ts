/**
 * Which net plugin file NCCL's dlopen opens (issue 37), against the real
 * dynamic loader of each lab root (Debian 13's glibc with NCCL 2.22, sid's
 * with NCCL 2.29). Small shared libraries, built here with gcc, each
 * exporting the path it was built for, are laid out under the names and
 * folders the loader's rules allow: LD_LIBRARY_PATH (an empty element, `;`),
 * ld.so.conf.d folders through a cache the root's own ldconfig writes (a
 * SONAME other than the file name; a file gone since), the system folders
 * with and without the cache, /usr/lib64 (not searched on Debian), paths.
 * In a mount namespace the root's /etc and /usr get an overlay and /opt a
 * bind mount, so the lab root itself is never written. Python's ctypes then
 * dlopen()s, in the root, the names NCCL dlopen()s for NCCL_NET_PLUGIN (as
 * read at NCCL's source; the NCCL itself loads plugins only with a GPU),
 * and nccl-run's findNetPlugin, run in the same namespace, must name the
 * same file in every case.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ncclBehaviour } from '../../src/nccl/behaviour.js';
import { netPluginEntries } from '../../src/transport/net-plugin-names.js';
import { CHECKOUT, labRoot, type Suite } from '../lab/debian-root.js';
import { firstMissing, tier } from '../lab/tier.js';

const LIB = '/usr/lib/x86_64-linux-gnu';

/** Each library by the real path it is built for; `soname` where it differs from the file name. */
const BEFORE_LDCONFIG: { path: string; soname?: string }[] = [
  { path: '/opt/n37/ld/libnccl-net.so' },
  { path: '/opt/n37/ld2/libnccl-net-ofi.so' },
  { path: '/opt/n37/conf/libnccl-net.so' },
  { path: '/opt/n37/conf/libnccl-net-cached.so' },
  { path: '/opt/n37/conf/libnccl-net-alias.so', soname: 'libnccl-net-other.so' },
  { path: '/opt/n37/conf/libnccl-net-gone.so' },
  { path: '/opt/n37/cwd/libnccl-net-cwd.so' },
  { path: '/opt/n37/abs/libnccl-net-abs.so' },
  { path: `${LIB}/libnccl-net-cachedsys.so` },
];
/** Laid out after ldconfig ran: the cache does not know them. */
const AFTER_LDCONFIG = [
  `${LIB}/libnccl-net-sys.so`,
  '/usr/lib/libnccl-net-usrlib.so',
  '/usr/lib64/libnccl-net-lib64.so',
];

interface Case {
  id: string;
  /** NCCL_NET_PLUGIN; undefined: unset. */
  plugin?: string;
  ncclVersion?: string;
  /** What NCCL dlopen()s, in order (read at its source for that release). */
  names: string[];
  ld?: string;
  cwd?: string;
  /** What the loader opens: a real path, or none. */
  expected: string;
}

const CASES: Case[] = [
  {
    id: 'default on LD_LIBRARY_PATH',
    names: ['libnccl-net.so'],
    ld: '/opt/n37/ld',
    expected: '/opt/n37/ld/libnccl-net.so',
  },
  {
    id: 'default from the cache',
    names: ['libnccl-net.so'],
    expected: '/opt/n37/conf/libnccl-net.so',
  },
  {
    id: 'first LD folder that has it',
    names: ['libnccl-net.so'],
    ld: '/opt/n37/none:/opt/n37/ld2:/opt/n37/ld',
    expected: '/opt/n37/ld/libnccl-net.so',
  },
  {
    id: '; separates LD folders too',
    names: ['libnccl-net.so'],
    ld: '/opt/n37/ld2;/opt/n37/ld',
    expected: '/opt/n37/ld/libnccl-net.so',
  },
  {
    id: '2.29 <x>: as named, then libnccl-net-<x>.so',
    plugin: 'ofi',
    names: ['ofi', 'libnccl-net-ofi.so'],
    ld: '/opt/n37/ld:/opt/n37/ld2',
    expected: '/opt/n37/ld2/libnccl-net-ofi.so',
  },
  {
    id: '2.22 <x>: the same two names',
    plugin: 'ofi',
    ncclVersion: '2.22.3',
    names: ['ofi', 'libnccl-net-ofi.so'],
    ld: '/opt/n37/ld2',
    expected: '/opt/n37/ld2/libnccl-net-ofi.so',
  },
  { id: '<x> nowhere', plugin: 'ofi', names: ['ofi', 'libnccl-net-ofi.so'], expected: 'none' },
  {
    id: 'a list: the first found',
    plugin: 'missing,cached',
    names: ['missing', 'libnccl-net-missing.so', 'cached', 'libnccl-net-cached.so'],
    expected: '/opt/n37/conf/libnccl-net-cached.so',
  },
  {
    id: '2.22 takes a list as one name',
    plugin: 'missing,cached',
    ncclVersion: '2.22.3',
    names: ['missing,cached', 'libnccl-net-missing,cached.so'],
    expected: 'none',
  },
  {
    id: 'none loads nothing (2.28.3+)',
    plugin: 'none',
    names: [],
    ld: '/opt/n37/ld',
    expected: 'none',
  },
  {
    id: 'the cache is keyed by SONAME, not file name',
    plugin: 'libnccl-net-alias.so',
    names: ['libnccl-net-alias.so'],
    expected: 'none',
  },
  {
    id: 'the SONAME ldconfig linked',
    plugin: 'libnccl-net-other.so',
    names: ['libnccl-net-other.so'],
    expected: '/opt/n37/conf/libnccl-net-alias.so',
  },
  {
    id: 'a cached file since removed',
    plugin: 'gone',
    names: ['gone', 'libnccl-net-gone.so'],
    expected: 'none',
  },
  {
    id: 'a system folder, cached',
    plugin: 'cachedsys',
    names: ['cachedsys', 'libnccl-net-cachedsys.so'],
    expected: `${LIB}/libnccl-net-cachedsys.so`,
  },
  {
    id: 'a system folder, not cached',
    plugin: 'sys',
    names: ['sys', 'libnccl-net-sys.so'],
    expected: `${LIB}/libnccl-net-sys.so`,
  },
  {
    id: '/usr/lib, not cached',
    plugin: 'usrlib',
    names: ['usrlib', 'libnccl-net-usrlib.so'],
    expected: '/usr/lib/libnccl-net-usrlib.so',
  },
  {
    id: '/usr/lib64 is not searched on Debian',
    plugin: 'lib64',
    names: ['lib64', 'libnccl-net-lib64.so'],
    expected: 'none',
  },
  {
    id: 'an empty LD element is the working folder',
    plugin: 'cwd',
    names: ['cwd', 'libnccl-net-cwd.so'],
    ld: ':/opt/n37/ld',
    cwd: '/opt/n37/cwd',
    expected: '/opt/n37/cwd/libnccl-net-cwd.so',
  },
  {
    id: 'the working folder is not searched otherwise',
    plugin: 'cwd',
    names: ['cwd', 'libnccl-net-cwd.so'],
    ld: '/opt/n37/ld',
    cwd: '/opt/n37/cwd',
    expected: 'none',
  },
  {
    id: 'a relative path',
    plugin: './libnccl-net-cwd.so',
    names: ['./libnccl-net-cwd.so'],
    cwd: '/opt/n37/cwd',
    expected: '/opt/n37/cwd/libnccl-net-cwd.so',
  },
  {
    id: 'an absolute path',
    plugin: '/opt/n37/abs/libnccl-net-abs.so',
    names: ['/opt/n37/abs/libnccl-net-abs.so'],
    expected: '/opt/n37/abs/libnccl-net-abs.so',
  },
  {
    id: 'a folder no rule searches',
    plugin: 'abs',
    names: ['abs', 'libnccl-net-abs.so'],
    expected: 'none',
  },
];

const PROBE = [
  'import ctypes, sys',
  'for name in sys.argv[1:]:',
  '    try:',
  '        where = ctypes.CDLL(name, mode=ctypes.RTLD_LOCAL).n37_where',
  '    except (OSError, AttributeError):',
  '        continue',
  '    where.restype = ctypes.c_char_p',
  '    print(where().decode()); break',
  'else:',
  '    print("none")',
].join('\n');

const q = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

const missing = firstMissing([
  ['/usr/bin/gcc', 'gcc is missing (apt-get install gcc)'],
  ['/usr/bin/unshare', 'unshare is missing (util-linux)'],
]);

for (const suite of ['trixie', 'sid'] as Suite[]) {
  const unavailable =
    process.getuid?.() !== 0
      ? 'mount namespaces and chroot need root (CI runs as root)'
      : (missing ?? ((root) => ('error' in root ? root.error : null))(labRoot(suite)));
  tier(`the net plugin NCCL loads, against ${suite}'s dynamic loader`, unavailable, () => {
    const work = mkdtempSync(join(tmpdir(), 'n37-loader-'));
    let loader: Record<string, string> = {};
    let ours: Record<string, string> = {};

    beforeAll(async () => {
      const root = (labRoot(suite) as { path: string }).path;
      const built = (path: string, soname?: string) => {
        const out = join(work, 'build', path);
        mkdirSync(dirname(out), { recursive: true });
        execFileSync(
          'gcc',
          [
            '-shared',
            '-fPIC',
            '-o',
            out,
            `-Wl,-soname,${soname ?? path.split('/').at(-1)}`,
            `-DWHERE="${path}"`,
            '-x',
            'c',
            '-',
          ],
          { input: 'const char *n37_where(void) { return WHERE; }\n' },
        );
        return out;
      };
      const place = (path: string, soname?: string) => {
        const target = path.startsWith('/opt/')
          ? join(work, 'opt', path.slice(5))
          : join(work, 'usr-up', path.slice(5));
        mkdirSync(dirname(target), { recursive: true });
        return `cp ${q(built(path, soname))} ${q(`${root}${path}`)}`;
      };
      mkdirSync(join(work, 'opt'), { recursive: true });
      for (const dir of ['etc-up', 'etc-work', 'usr-up', 'usr-work']) mkdirSync(join(work, dir));
      const cases = CASES.map((entry) => ({
        id: entry.id,
        ncclVersion: entry.ncclVersion ?? '2.29.7',
        env: {
          ...(entry.ld === undefined ? {} : { LD_LIBRARY_PATH: entry.ld }),
          ...(entry.plugin === undefined ? {} : { NCCL_NET_PLUGIN: entry.plugin }),
        },
        cwd: entry.cwd ?? '/',
      }));
      writeFileSync(join(work, 'cases.json'), JSON.stringify(cases));
      const probes = CASES.map((entry) => {
        const env =
          entry.ld === undefined ? 'env -u LD_LIBRARY_PATH' : `env LD_LIBRARY_PATH=${q(entry.ld)}`;
        return `printf '%s\\t' ${q(entry.id)}; chroot ${q(root)} sh -c ${q(`cd ${entry.cwd ?? '/'} && exec ${env} python3 -c ${q(PROBE)} ${entry.names.map(q).join(' ')}`)}`;
      });
      const script = [
        'set -e',
        `mount -t overlay n37-etc -o lowerdir=${root}/etc,upperdir=${work}/etc-up,workdir=${work}/etc-work ${root}/etc`,
        `mount -t overlay n37-usr -o lowerdir=${root}/usr,upperdir=${work}/usr-up,workdir=${work}/usr-work ${root}/usr`,
        `mount --bind ${work}/opt ${root}/opt`,
        `mount -t proc proc ${root}/proc`,
        ...BEFORE_LDCONFIG.map((lib) => place(lib.path, lib.soname)),
        `echo /opt/n37/conf > ${root}/etc/ld.so.conf.d/n37.conf`,
        `chroot ${root} ldconfig`,
        `rm ${root}/opt/n37/conf/libnccl-net-gone.so`,
        ...AFTER_LDCONFIG.map((path) => place(path)),
        'set +e',
        ...probes,
        `${q(process.execPath)} --import tsx ${q(join(CHECKOUT, 'test/lab/loader-answers.mts'))} ${root} ${work}/cases.json > ${work}/ours.json`,
      ].join('\n');
      writeFileSync(join(work, 'inside.sh'), script);
      const { stdout } = await execa('unshare', ['-m', 'sh', join(work, 'inside.sh')], {
        cwd: CHECKOUT,
        timeout: 60_000,
      });
      loader = Object.fromEntries(
        stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split('\t') as [string, string]),
      );
      ours = JSON.parse(readFileSync(join(work, 'ours.json'), 'utf8')) as Record<string, string>;
    }, 90_000);

    afterAll(() => rmSync(work, { recursive: true, force: true }));

    it.each(CASES)('$id', (entry) => {
      const rules = ncclBehaviour(entry.ncclVersion ?? '2.29.7').netPluginNames;
      expect(netPluginEntries(entry.plugin, rules).flatMap((e) => e.names)).toEqual(entry.names);
      expect(loader[entry.id], 'the real loader').toBe(entry.expected);
      expect(ours[entry.id], "nccl-run's findNetPlugin").toBe(loader[entry.id]);
    });
  });
}
