/**
 * The templates of `nccl-run init` (SPEC "Command line") and the values each
 * one takes. A value is written into a shell script or a YAML document as is,
 * so each has a check that keeps it a single plain word there.
 */
import { parseDuration } from '../cli/duration.js';
import { OPTION_SPECS } from '../cli/options.js';
import { STRATEGY_NAMES } from '../resolve/decision.js';
import { DEFAULT_CHAIN } from '../resolve/strategies/index.js';

export const TEMPLATE_NAMES = ['slurm', 'k8s', 'docker', 'compose', 'env'] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export interface TemplateValue {
  default: string;
  accepts: (value: string) => boolean;
  /** What a valid value looks like, for the error message. */
  expected: string;
}

export interface TemplateSpec {
  /** Path from the package root: the file is read from there at run time, or from the bundle. */
  file: string;
  values: Record<string, TemplateValue>;
}

const matching = (pattern: RegExp) => (value: string) => pattern.test(value);
const choicesOf = (option: string): readonly string[] =>
  OPTION_SPECS.find((spec) => spec.name === option)?.choices ?? [];
const choice = (option: string, fallback: string): TemplateValue => ({
  default: fallback,
  accepts: (value) => choicesOf(option).includes(value),
  expected: `one of ${choicesOf(option).join(', ')}`,
});

const count = (fallback: string, min = 1): TemplateValue => ({
  default: fallback,
  accepts: matching(min === 0 ? /^(0|[1-9]\d{0,5})$/ : /^[1-9]\d{0,5}$/),
  expected: `a whole number >= ${min}`,
});
const scriptPath: TemplateValue = {
  default: 'train.py',
  accepts: matching(/^[A-Za-z0-9_./-]+$/),
  expected: 'a path of letters, digits, _ . / -',
};
const image: TemplateValue = {
  default: 'nccl-run-train:latest',
  accepts: matching(/^[a-z0-9][a-z0-9._/:@-]*$/),
  expected: 'an image reference such as registry.example.com/team/train:1.0',
};

export const TEMPLATES: Record<TemplateName, TemplateSpec> = {
  slurm: {
    file: 'templates/slurm.sbatch',
    values: {
      JOB_NAME: {
        default: 'train',
        accepts: matching(/^[A-Za-z0-9_.-]+$/),
        expected: 'letters, digits, _ . -',
      },
      NODES: count('2'),
      GPUS_PER_NODE: count('8'),
      CPUS_PER_TASK: count('32'),
      TIME: {
        default: '04:00:00',
        accepts: matching(/^(\d+-)?\d+(:\d{2}){0,2}$/),
        expected: "Slurm's time format: MM, HH:MM:SS or D-HH:MM:SS",
      },
      SCRIPT: scriptPath,
    },
  },
  k8s: {
    file: 'templates/pytorchjob.yaml',
    values: {
      // A DNS-1123 label short enough for "<name>-worker-<index>" to stay one.
      JOB_NAME: {
        default: 'train',
        accepts: matching(/^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$/),
        expected: 'a DNS label: lowercase letters, digits and -, at most 40 characters',
      },
      WORKERS: count('1', 0),
      GPUS_PER_NODE: count('8'),
      IMAGE: image,
      SCRIPT: scriptPath,
    },
  },
  docker: { file: 'Dockerfile.example', values: {} },
  compose: { file: 'templates/compose.yaml', values: { IMAGE: image, SCRIPT: scriptPath } },
  env: {
    file: 'templates/nccl-run.env',
    values: {
      STRATEGY: {
        default: DEFAULT_CHAIN.join(','),
        accepts: (value) =>
          value.split(',').every((name) => (STRATEGY_NAMES as readonly string[]).includes(name)),
        expected: `a comma list of ${STRATEGY_NAMES.join(', ')}`,
      },
      VERIFY: choice('verify', 'master'),
      VERIFY_TIMEOUT: {
        default: '60s',
        accepts: (value) => parseDuration(value) !== null,
        expected: 'a duration such as 500ms, 30s, 2m',
      },
      CLUSTER: choice('cluster', 'auto'),
    },
  },
};
