/**
 * The settings lint (src/nccl/settings-lint.ts) against each release's
 * parameter record (src/nccl/params/nccl-params.ts, read at NVIDIA/nccl's
 * tags): a name NCCL reads is never flagged for a release that reads it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FOREIGN_NAMES } from '../../../src/nccl/params/foreign-names.js';
import { NCCL_PARAMETER_RECORDS } from '../../../src/nccl/params/nccl-params.js';
import { parametersOf } from '../../../src/nccl/params/release-parameters.js';
import { lintNcclSettings } from '../../../src/nccl/settings-lint.js';

const inEnv = (value = '1') => ({ value, where: 'the environment' });
const lintOne = (name: string, version: string | null, value = '1') =>
  lintNcclSettings({ [name]: inEnv(value) }, version);

/** Each record's release, and the names it reads. */
const RELEASES = NCCL_PARAMETER_RECORDS.map(({ version }) => ({
  version,
  names: [...(parametersOf(version) ?? [])],
}));

describe('a name NCCL reads', () => {
  it('is never flagged for a release that reads it, nor for an unknown release', () => {
    for (const { version, names } of RELEASES) {
      for (const name of names) {
        // '-2' is NCCL's auto for the socket counts: no clamp note either.
        expect(lintOne(name, version, '-2'), `${name} in ${version}`).toEqual([]);
        expect(lintOne(name, null, '-2'), name).toEqual([]);
      }
    }
  });

  it('is never flagged, in any mix, for a release that reads them all (property)', () => {
    const releaseAndNames = fc
      .constantFrom(...RELEASES)
      .chain(({ version, names }) =>
        fc.tuple(
          fc.constant(version),
          fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 12 }),
        ),
      );
    fc.assert(
      fc.property(releaseAndNames, ([version, names]) => {
        const settings = Object.fromEntries(names.map((name) => [name, inEnv('-2')]));
        expect(lintNcclSettings(settings, version)).toEqual([]);
      }),
    );
  });

  it("is judged against the job's release where that release does not read it", () => {
    // src/misc/param.cc getenv("NCCL_CONF_FILE") from v2.23.4-1.
    expect(lintOne('NCCL_CONF_FILE', '2.22.3')).toEqual([
      "NCCL_CONF_FILE (set in the environment): NCCL reads it from 2.23.4 on; this job's NCCL 2.22.3 ignores it",
    ]);
    // src/init.cc NCCL_PARAM(MNNVL, "MNNVL", -2) in v2.20.x only.
    expect(lintOne('NCCL_MNNVL', '2.29.7')).toEqual([
      "NCCL_MNNVL (set in the environment): NCCL read it from 2.20.3 until 2.21.5 dropped it; this job's NCCL 2.29.7 ignores it",
    ]);
  });

  it('is not judged by release where the version is unknown or older than the records', () => {
    expect(lintOne('NCCL_CONF_FILE', null)).toEqual([]);
    expect(lintOne('NCCL_CONF_FILE', '2.17.1')).toEqual([]);
  });
});

describe('a name no release reads', () => {
  it('names the nearest real one', () => {
    expect(lintOne('NCCL_NSOCS_PERTHREAD', '2.22.3')).toEqual([
      'NCCL_NSOCS_PERTHREAD (set in the environment): no NCCL release from 2.18.1 to 2.30.7 reads it, so NCCL ignores it; did you mean NCCL_NSOCKS_PERTHREAD?',
    ]);
  });

  it('says so without a guess where no real name is near', () => {
    expect(lintOne('NCCL_COMPLETELY_MADE_UP', null)).toEqual([
      'NCCL_COMPLETELY_MADE_UP (set in the environment): no NCCL release from 2.18.1 to 2.30.7 reads it, so NCCL ignores it',
    ]);
  });

  it('that is no NCCL setting at all names what does the job', () => {
    const [warning] = lintOne('NCCL_PORT_RANGE', '2.29.7', '50000-51000');
    expect(warning).toMatch(
      /^NCCL_PORT_RANGE \(set in the environment\): no NCCL release from 2\.18\.1 to 2\.30\.7 reads it: NCCL has no port-range setting; .*net\.ipv4\.ip_local_port_range/,
    );
  });

  it('in the wrong case names the upper-case one NCCL reads', () => {
    expect(lintOne('nccl_debug', '2.22.3', 'INFO')).toEqual([
      'nccl_debug (set in the environment): NCCL reads NCCL_DEBUG, in upper case, and ignores this one',
    ]);
  });

  it("in lower case, and no NCCL name, is the user's own variable", () => {
    expect(lintOne('nccl_build_tag', '2.22.3')).toEqual([]);
    expect(lintOne('Nccl_Nsocs_Perthread', '2.22.3')).toEqual([]);
  });
});

describe("names that are not NCCL's", () => {
  const examples = [
    'NCCL_OFI_USE_GDRCOPY',
    'NCCL_GPUDIRECTTCPX_SOCKET_IFNAME',
    'NCCL_FASTRAK_CTRL_DEV',
    'NCCL_TUNER_CONFIG_FILE',
    'NCCL_PROFILE_EVENT_MASK',
    'NCCL_PROFILER_CE_TIMING',
    'NCCL_INSPECTOR_ENABLE',
    'NCCL_SHARP_DISABLE',
    'NCCL_TESTS_SPLIT_MASK',
    'NCCL_VERSION',
    'NCCL_HOME',
    'NCCL_ROOT',
    'NCCL_ROOT_DIR',
    'NCCL_INCLUDE_DIR',
    'NCCL_LIB_DIR',
    'NCCL_DIR',
    'NCCL_ASYNC_ERROR_HANDLING',
    'NCCL_BLOCKING_WAIT',
    'NCCL_DESYNC_DEBUG',
    'NCCL_ENABLE_TIMING',
    'NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK',
    'NCCL_RUN_IFACE',
  ];

  it.each(examples)('%s is never flagged, for any release', (name) => {
    for (const version of [null, ...RELEASES.map((release) => release.version)]) {
      expect(lintOne(name, version), `${name} ${version}`).toEqual([]);
    }
  });

  it('the examples cover every foreign entry', () => {
    for (const { match } of FOREIGN_NAMES) {
      expect(
        examples.some((name) => (match.endsWith('_') ? name.startsWith(match) : name === match)),
        match,
      ).toBe(true);
    }
  });

  it("a plugin's prefix does not hide NCCL's own name under it", () => {
    // NCCL_TUNER_PLUGIN is NCCL's (src/plugin/tuner.cc), read from the records' first release.
    expect(lintOne('NCCL_TUNER_PLUGIN', '2.22.3', 'libnccl-tuner.so')).toEqual([]);
    expect(lintOne('NCCL_TUNER_PLUGIN', '2.17.1', 'x')).toEqual([]);
  });
});

describe('where it was set', () => {
  it('names the env file and NCCL’s configuration file as given', () => {
    const warnings = lintNcclSettings(
      {
        NCCL_NSOCS_PERTHREAD: { value: '4', where: 'the env file ./nccl-run.env' },
        NCCL_PORT_RANGE: { value: '1-2', where: '/etc/nccl.conf' },
      },
      '2.29.7',
    );
    expect(warnings[0]).toMatch(
      /^NCCL_NSOCS_PERTHREAD \(set in the env file \.\/nccl-run\.env\): /,
    );
    expect(warnings[1]).toMatch(/^NCCL_PORT_RANGE \(set in \/etc\/nccl\.conf\): /);
  });
});
