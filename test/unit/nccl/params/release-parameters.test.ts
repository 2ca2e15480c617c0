/**
 * The parameter records (src/nccl/params/nccl-params.ts, written by
 * scripts/nccl-params.js at NVIDIA/nccl's tags) and their fold per release.
 */
import { describe, expect, it } from 'vitest';
import { ncclBehaviour } from '../../../../src/nccl/behaviour.js';
import { NCCL_PARAMETER_RECORDS } from '../../../../src/nccl/params/nccl-params.js';
import {
  EVERY_PARAMETER,
  PARAMETER_RELEASES,
  parametersOf,
  releasesReading,
} from '../../../../src/nccl/params/release-parameters.js';
import { compareVersions } from '../../../../src/version-order.js';

describe('the records', () => {
  it('are oldest first, each a change to the one before', () => {
    const versions = NCCL_PARAMETER_RECORDS.map((record) => record.version);
    expect([...versions].sort(compareVersions)).toEqual(versions);
    expect(NCCL_PARAMETER_RECORDS[0]?.removed).toEqual([]);
    let names = new Set<string>();
    for (const record of NCCL_PARAMETER_RECORDS) {
      expect(record.tag).toBe(`v${record.version}-1`);
      expect(record.added.length + record.removed.length, record.tag).toBeGreaterThan(0);
      for (const name of record.added) expect(names.has(name), `${record.tag} ${name}`).toBe(false);
      for (const name of record.removed)
        expect(names.has(name), `${record.tag} ${name}`).toBe(true);
      names = new Set([...names, ...record.added].filter((name) => !record.removed.includes(name)));
    }
  });

  it('hold only NCCL_ names, each list sorted', () => {
    for (const record of NCCL_PARAMETER_RECORDS) {
      for (const list of [record.added, record.removed]) {
        expect([...list].sort()).toEqual(list);
        for (const name of list) expect(name).toMatch(/^NCCL_[A-Z0-9_]+$/);
      }
    }
  });

  // Spot checks against the source at the tags: src/transport/net_socket.cc
  // NCCL_PARAM(SocketNsocksPerThread, "NSOCKS_PERTHREAD", -2) at every tag;
  // src/misc/param.cc getenv("NCCL_CONF_FILE") from v2.23.4-1; src/bootstrap.cc
  // NCCL_PARAM(RasEnable, "RAS_ENABLE", 1) from v2.24.3-1; src/init.cc
  // NCCL_PARAM(MNNVL, "MNNVL", -2) in v2.20.x, renamed MNNVL_ENABLE in v2.21.5-1.
  it.each([
    ['NCCL_NSOCKS_PERTHREAD', '2.18.1', true],
    ['NCCL_NSOCKS_PERTHREAD', '2.30.7', true],
    ['NCCL_SOCKET_IFNAME', '2.22.3', true],
    ['NCCL_CONF_FILE', '2.22.3', false],
    ['NCCL_CONF_FILE', '2.23.4', true],
    ['NCCL_RAS_ENABLE', '2.23.4', false],
    ['NCCL_RAS_ENABLE', '2.24.3', true],
    ['NCCL_MNNVL', '2.20.5', true],
    ['NCCL_MNNVL', '2.21.5', false],
    ['NCCL_MNNVL_ENABLE', '2.21.5', true],
  ] as const)('%s read by NCCL %s: %s', (name, version, read) => {
    expect(parametersOf(version)?.has(name)).toBe(read);
  });
});

describe('the records and releases.ts', () => {
  // Two readings of the same source: what releases.ts says a release does
  // with a variable, and whether the records say it reads that variable.
  it.each(NCCL_PARAMETER_RECORDS.map(({ version }) => version))('agree at %s', (version) => {
    const behaviour = ncclBehaviour(version);
    const reads = parametersOf(version);
    expect(reads?.has('NCCL_CONF_FILE')).toBe(behaviour.confFileVariable);
    expect(reads?.has('NCCL_ENV_PLUGIN')).toBe(behaviour.envPlugin);
    expect(reads?.has('NCCL_CUMEM_HOST_ENABLE')).toBe(behaviour.shm.cuMemHost !== 'never');
  });
});

describe('parametersOf', () => {
  it('a patch release without a record reads what the record before it reads', () => {
    expect(parametersOf('2.22.3')).toBe(parametersOf('2.22.4'));
    expect(parametersOf('2.26.6')).toBe(parametersOf('2.26.2'));
  });

  it('cannot say for an unknown version, or one older than the records', () => {
    expect(parametersOf(null)).toBeNull();
    expect(parametersOf('2.17.1')).toBeNull();
  });

  it('a newer release than the records reads what the newest does', () => {
    expect(parametersOf('2.31.1')).toBe(parametersOf(PARAMETER_RELEASES.last));
  });
});

describe('releasesReading', () => {
  it('gives the spans from the first release that reads a name to the first that does not', () => {
    expect(releasesReading('NCCL_RAS_ENABLE')).toEqual([{ from: '2.24.3', until: null }]);
    expect(releasesReading('NCCL_MNNVL')).toEqual([{ from: '2.20.3', until: '2.21.5' }]);
    expect(releasesReading('NCCL_NO_SUCH')).toEqual([]);
  });

  it('agrees with parametersOf for every name and record', () => {
    for (const name of EVERY_PARAMETER) {
      for (const { version } of NCCL_PARAMETER_RECORDS) {
        const inSpan = releasesReading(name).some(
          ({ from, until }) =>
            compareVersions(version, from) >= 0 &&
            (until === null || compareVersions(version, until) < 0),
        );
        expect(inSpan, `${name} ${version}`).toBe(parametersOf(version)?.has(name));
      }
    }
  });
});
