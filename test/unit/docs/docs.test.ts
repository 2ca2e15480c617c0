/**
 * The manual a person finds their way in (SPEC "Documentation", issue 46):
 * a README read in minutes, and every link in it and in docs/ reaching a
 * file and a heading that exist, as GitHub resolves them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, githubSlug, relativeLinks } from './markdown-links.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the README', () => {
  it('is within 300 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('links every page of docs/', () => {
    const linked = new Set(relativeLinks(read('README.md')).map((target) => target.split('#')[0]));
    for (const page of PAGES.filter((path) => path !== 'README.md')) expect(linked).toContain(page);
  });

  it("keeps CI's test command, which .ci/run runs", () => {
    expect(read('README.md')).toContain('\n```sh\nCI=true npm test\n```\n');
    expect(read('.ci/run')).toMatch(/^CI=true npm test$/m);
  });
});

describe.each(PAGES)('%s', (page) => {
  it('every relative link reaches a file, and its #anchor a heading there', () => {
    const broken: string[] = [];
    for (const target of relativeLinks(read(page))) {
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), path);
      if (!existsSync(file) || !file.startsWith(ROOT)) {
        broken.push(`${target}: no file ${relative(ROOT, file)}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(file).isDirectory() || !file.endsWith('.md'))
        broken.push(`${target}: an anchor into a file that is no Markdown page`);
      else if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor))
        broken.push(`${target}: no heading makes #${anchor}`);
    }
    expect(broken).toEqual([]);
  });
});

describe('githubSlug', () => {
  it.each([
    ['Exit status', 'exit-status'],
    ['The `--verify` levels', 'the---verify-levels'],
    ["nccl-run's words and torchrun's", 'nccl-runs-words-and-torchruns'],
    [
      'Kubernetes: Kubeflow Trainer v2 (TrainJob), LeaderWorkerSet, PyTorchJob',
      'kubernetes-kubeflow-trainer-v2-trainjob-leaderworkerset-pytorchjob',
    ],
    [
      'Net plugins: AWS EFA, GCP GPUDirect-TCPX/TCPXO',
      'net-plugins-aws-efa-gcp-gpudirect-tcpxtcpxo',
    ],
    ['NCCL_SOCKET_IFNAME and [links](x.md)', 'nccl_socket_ifname-and-links'],
  ])('%s', (heading, slug) => {
    expect(githubSlug(heading)).toBe(slug);
  });

  it('numbers a repeated heading as GitHub does, and skips code blocks', () => {
    expect([...anchorsOf('# A\n\n## A\n\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
  });
});
