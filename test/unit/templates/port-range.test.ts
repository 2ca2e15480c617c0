import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { UsageError } from '../../../src/errors.js';
import { templateText } from '../../../src/templates/init.js';
import { parsePortRange, withPortRange } from '../../../src/templates/port-range.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is checked field by field
type Doc = any;

const RANGE = { low: 50_000, high: 51_000 };
const SYSCTL = [{ name: 'net.ipv4.ip_local_port_range', value: '50000 51000' }];

// merge: compose's `<<: *node` (YAML 1.1 merge keys, which compose reads).
const docsOf = (text: string): Doc[] =>
  parseAllDocuments(text, { merge: true }).map((doc) => doc.toJS());

describe('parsePortRange', () => {
  it.each([
    ['50000-51000', { low: 50_000, high: 51_000 }],
    [' 1024 - 65535 ', { low: 1024, high: 65_535 }],
    ['40000-40000', { low: 40_000, high: 40_000 }],
  ])('%s', (text, range) => {
    expect(parsePortRange(text)).toEqual(range);
  });

  it.each([
    [
      '1000-2000',
      '--port-range 1000-2000: LOW 1000 is below 1024; expected LOW-HIGH with 1024 <= LOW <= HIGH <= 65535, e.g. 50000-51000',
    ],
    ['50000-70000', '--port-range 50000-70000: HIGH 70000 is above 65535'],
    ['51000-50000', '--port-range 51000-50000: LOW 51000 is above HIGH 50000'],
    ['50000:51000', '--port-range 50000:51000: expected LOW-HIGH'],
    ['50000', '--port-range 50000: expected LOW-HIGH'],
    ['', '--port-range : expected LOW-HIGH'],
  ])('%s → one usage line (exit 64)', (text, message) => {
    const parse = () => parsePortRange(text);
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(message);
  });
});

describe('withPortRange', () => {
  it.each([
    [
      'k8s',
      (docs: Doc[]) => docs[0].spec.template.spec.replicatedJobs[0].template.spec.template.spec,
    ],
    ['lws', (docs: Doc[]) => docs[0].spec.leaderWorkerTemplate.workerTemplate.spec],
    ['pytorchjob', (docs: Doc[]) => docs[0].spec.pytorchReplicaSpecs.Worker.template.spec],
  ] as const)("%s: the pod's securityContext.sysctls (a safe sysctl)", (name, podOf) => {
    expect(podOf(docsOf(templateText(name))).securityContext).toBeUndefined();
    const pod = podOf(docsOf(withPortRange(name, templateText(name), RANGE)));
    expect(pod.securityContext).toEqual({ sysctls: SYSCTL });
  });

  it('pytorchjob: Master and Worker alike (one pod template, a YAML anchor)', () => {
    const [job] = docsOf(withPortRange('pytorchjob', templateText('pytorchjob'), RANGE));
    expect(job.spec.pytorchReplicaSpecs.Master.template.spec.securityContext.sysctls).toEqual(
      SYSCTL,
    );
  });

  it('compose: sysctls: on every node', () => {
    const [compose] = docsOf(withPortRange('compose', templateText('compose'), RANGE));
    for (const node of ['node0', 'node1']) {
      expect(compose.services[node].sysctls).toEqual({
        'net.ipv4.ip_local_port_range': '50000 51000',
      });
    }
  });

  it('docker: the --sysctl in the usage comment, and nothing else', () => {
    const before = templateText('docker');
    const after = withPortRange('docker', before, RANGE);
    expect(after).toContain('docker run --sysctl net.ipv4.ip_local_port_range="50000 51000"');
    expect(after.replace('"50000 51000"', '"32768 60999"')).toBe(before);
  });

  it("each template says that a hostNetwork pod's range is the node's", () => {
    for (const name of ['k8s', 'lws', 'pytorchjob'] as const) {
      expect(templateText(name)).toMatch(/hostNetwork pod uses the node's own range/);
    }
    expect(templateText('compose')).toMatch(/network_mode: host the range is the host's/);
    expect(templateText('docker')).toMatch(/--network host that is the host's/);
  });

  it.each(['slurm', 'env'] as const)(
    '%s: not a network namespace of its own → usage error',
    (name) => {
      const write = () => withPortRange(name, templateText(name), RANGE);
      expect(write).toThrow(UsageError);
      expect(write).toThrow(`--port-range does not apply to the ${name} template`);
    },
  );
});

describe('nccl-run init --port-range (the CLI)', () => {
  it('writes the range; a bad one is one line on stderr and exit 64', async () => {
    const ok = await execa('bin/nccl-run', ['init', 'lws', '--port-range', '50000-51000'], {
      reject: false,
    });
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toContain('value: "50000 51000"');
    const bad = await execa('bin/nccl-run', ['init', 'lws', '--port-range', '80-90'], {
      reject: false,
    });
    expect(bad.exitCode).toBe(64);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toEqual([
      'nccl-run: --port-range 80-90: LOW 80 is below 1024; expected LOW-HIGH with 1024 <= LOW <= HIGH <= 65535, e.g. 50000-51000',
    ]);
  });
});
