import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse as parseDotenv } from 'dotenv';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { splitArgv } from '../../../src/cli/split-argv.js';
import { PROGRAM_FILE } from '../../../src/collective/program.js';
import { UsageError } from '../../../src/errors.js';
import { envNameOf, OPTIONS } from '../../../src/options/option-table.js';
import { settleOptions } from '../../../src/options/settle-options.js';
import { packageVersion } from '../../../src/package-version.js';
import { runInit, templateText } from '../../../src/templates/init.js';
import { TEMPLATES } from '../../../src/templates/shipped-files.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';

const root = join(import.meta.dirname, '..', '..', '..');
const tempDir = tempDirs('nccl-run-templates-');

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is checked field by field
type Doc = any;

describe('every template', () => {
  it('is embedded in the one-file bundle, beside the program of --verify collective', async () => {
    const { TEMPLATE_FILES } = await import('../../../scripts/bundle.js');
    expect([...TEMPLATE_FILES].sort()).toEqual([...Object.values(TEMPLATES), PROGRAM_FILE].sort());
  });
});

describe('slurm', () => {
  const script = templateText('slurm');

  it('passes bash -n', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'job.sbatch'), script);
    await expect(execa('bash', ['-n', join(dir, 'job.sbatch')])).resolves.toMatchObject({
      exitCode: 0,
    });
  });

  it('asks Slurm for what was asked: one task per node', () => {
    const directives = script.split('\n').filter((line) => line.startsWith('#SBATCH'));
    expect(directives).toEqual([
      '#SBATCH --job-name=train',
      '#SBATCH --nodes=2',
      '#SBATCH --ntasks-per-node=1',
      '#SBATCH --gpus-per-node=8',
      '#SBATCH --cpus-per-task=32',
      '#SBATCH --time=04:00:00',
      '#SBATCH --output=%x-%j.out',
    ]);
  });

  it('runs srun nccl-run, and nccl-run hands torchrun exactly its arguments', async () => {
    const dir = tempDir();
    const argvFile = join(dir, 'srun-argv.json');
    writeFileSync(
      join(dir, 'srun'),
      `#!/bin/sh\nexec node -e 'require("fs").writeFileSync(process.env.SRUN_ARGV_FILE, JSON.stringify(process.argv.slice(1)))' -- "$@"\n`,
    );
    chmodSync(join(dir, 'srun'), 0o755);
    writeFileSync(join(dir, 'job.sbatch'), script);
    await execa('bash', [join(dir, 'job.sbatch')], {
      env: { PATH: `${dir}:${process.env.PATH}`, SRUN_ARGV_FILE: argvFile },
    });
    const argv = JSON.parse(readFileSync(argvFile, 'utf8')) as string[];
    const launched = argv.slice(argv.indexOf('nccl-run') + 1);
    expect(argv.slice(0, argv.indexOf('nccl-run'))).toEqual([
      '--ntasks-per-node=1',
      '--kill-on-bad-exit=1',
    ]);
    expect(splitArgv(launched)).toMatchObject({
      command: 'run',
      flags: {
        strategy: 'explicit,local,agree,subnet,route,speed',
        verify: 'peers',
        'verify-timeout': '5m',
      },
      torchrun: ['--nproc_per_node=8', 'train.py'],
    });
  });
});

/** The volumes every Kubernetes template gives its pods: the copy, /dev/shm, the downward API. */
const POD_VOLUMES = [
  { name: 'nccl-run', emptyDir: {} },
  { name: 'dshm', emptyDir: { medium: 'Memory' } },
  {
    name: 'podinfo',
    downwardAPI: {
      items: [{ path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } }],
    },
  },
];

/**
 * The pre-flight init container of every Kubernetes template: it copies
 * nccl-run and tini-static into the emptyDir, then runs `nccl-run check
 * --verify LEVEL` (peers; local in a PyTorchJob, whose master is not
 * published before it is Ready) with the mounts the training container has.
 */
function expectPreflight(pod: Doc, level = 'peers') {
  const [init, ...others] = pod.initContainers;
  expect(others).toEqual([]);
  expect(init.name).toBe('nccl-run');
  expect(init.image).toBe(`nccl-run:${packageVersion()}`);
  const [shell, dashC, script, zero] = init.command;
  expect([shell, dashC, zero]).toEqual(['sh', '-c', 'nccl-run']);
  expect(script).toBe(
    'cp /usr/local/bin/nccl-run /usr/bin/tini-static /nccl-run/ && exec tini -- nccl-run check "$@"',
  );
  expect(splitArgv(['check', ...init.args])).toMatchObject({
    command: 'check',
    flags: {
      verify: level,
      'verify-timeout': '5m',
      'network-status': '/etc/podinfo/annotations',
    },
    torchrun: [],
  });
  expect(init.volumeMounts).toEqual([
    { name: 'nccl-run', mountPath: '/nccl-run' },
    { name: 'dshm', mountPath: '/dev/shm' },
    { name: 'podinfo', mountPath: '/etc/podinfo', readOnly: true },
  ]);
  expect(pod.volumes).toEqual(POD_VOLUMES);
  for (const container of pod.containers) expect(container.volumeMounts).toEqual(init.volumeMounts);
}

/** The training container's nccl-run, from the copy, under tini. */
function expectLaunch(container: Doc, torchrun: string[]) {
  expect(container.command).toEqual(['/nccl-run/tini-static', '--', '/nccl-run/nccl-run']);
  expect(splitArgv(container.args)).toMatchObject({
    command: 'run',
    flags: {
      verify: 'master',
      'verify-timeout': '5m',
      'network-status': '/etc/podinfo/annotations',
    },
    torchrun,
  });
}

describe('k8s', () => {
  const docs: Doc[] = parseAllDocuments(templateText('k8s')).map((doc) => doc.toJS());
  const [runtime, job] = docs;

  it('is the runtime, then the TrainJob that names it: kubectl apply creates in file order, and the webhook wants the runtime first', () => {
    // kubeflow/trainer v2.0.1 and v2.3.0 pkg/runtime/core/trainingruntime.go ValidateObjects.
    expect(docs.map((doc) => [doc.apiVersion, doc.kind])).toEqual([
      ['trainer.kubeflow.org/v1alpha1', 'TrainingRuntime'],
      ['trainer.kubeflow.org/v1alpha1', 'TrainJob'],
    ]);
    expect(job.spec.runtimeRef).toEqual({ name: runtime.metadata.name, kind: 'TrainingRuntime' });
    expect(runtime.metadata.labels).toEqual({ 'trainer.kubeflow.org/framework': 'torch' });
    expect(job.spec.trainer).toMatchObject({
      numProcPerNode: 8,
      image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime',
      resourcesPerNode: { limits: { 'nvidia.com/gpu': 8 } },
    });
  });

  it("counts the nodes in one place, the runtime's mlPolicy.numNodes, which the pre-flight's PET_NNODES repeats", () => {
    // trainingruntime.go: the node Job's count is mlPolicy.numNodes unless the TrainJob sets trainer.numNodes.
    expect(job.spec.trainer.numNodes).toBeUndefined();
    const pod = runtime.spec.template.spec.replicatedJobs[0].template.spec.template.spec;
    const nnodes = pod.initContainers[0].env.find((v: Doc) => v.name === 'PET_NNODES');
    expect(runtime.spec.mlPolicy.numNodes).toBe(2);
    expect(nnodes.value).toBe(String(runtime.spec.mlPolicy.numNodes));
  });

  it("runs tini -- nccl-run train.py in the trainer's node container; torchrun reads the torch plugin's PET_*", () => {
    expectLaunch(job.spec.trainer, ['train.py']);
  });

  it("has the torch-distributed runtime's shape: replicated Job `node`, its ancestor label, container `node`", () => {
    // kubeflow/trainer v2.3.0 manifests/base/runtimes/torch_distributed.yaml
    // Its torch.numProcPerNode: auto is gone from v2.3.0's CRD; the TrainJob's numProcPerNode says it.
    expect(runtime.spec.mlPolicy.torch).toEqual({});
    const [replicated, ...more] = runtime.spec.template.spec.replicatedJobs;
    expect(more).toEqual([]);
    expect(replicated.name).toBe('node');
    expect(replicated.template.metadata.labels).toEqual({
      'trainer.kubeflow.org/trainjob-ancestor-step': 'trainer',
    });
    const pod = replicated.template.spec.template.spec;
    expect(pod.containers.map((c: Doc) => c.name)).toEqual(['node']);
  });

  it('runs the pre-flight in an init container that reads the job from the pod, with no envInjection (v2.3.0 only)', () => {
    const pod = runtime.spec.template.spec.replicatedJobs[0].template.spec.template.spec;
    expectPreflight(pod);
    expect(runtime.spec.mlPolicy.torch.envInjection).toBeUndefined();
    expect(pod.initContainers[0].env).toEqual([
      { name: 'PET_NNODES', value: '2' },
      {
        name: 'PET_NODE_RANK',
        valueFrom: {
          fieldRef: {
            fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
          },
        },
      },
      {
        name: 'TRAINJOB_NAME',
        valueFrom: {
          fieldRef: { fieldPath: "metadata.labels['jobset.sigs.k8s.io/jobset-name']" },
        },
      },
    ]);
  });

  it('keeps a failed pre-flight readable: pods restartPolicy Never, and the first failure ends the Job', () => {
    // OnFailure: init-container restarts count toward backoffLimit, and the Job controller
    // deletes the active pods when it is past (kubernetes pkg/controller/job pastBackoffLimitOnFailure).
    const replicated = runtime.spec.template.spec.replicatedJobs[0];
    expect(replicated.template.spec.backoffLimit).toBe(0);
    expect(replicated.template.spec.template.spec.restartPolicy).toBe('Never');
  });

  it('has the Multus annotation, commented, on the pod template', () => {
    expect(templateText('k8s')).toMatch(
      /^ {16}# metadata:\n {16}# {3}annotations:\n {16}# {5}k8s\.v1\.cni\.cncf\.io\/networks: data-net # attached as net1\n {16}spec:\n {18}restartPolicy: Never\n/m,
    );
  });
});

describe('lws', () => {
  const doc: Doc = parseYaml(templateText('lws'));

  it('is a LeaderWorkerSet of one group of 2 pods, whose pods restart alone (a failed pre-flight keeps its log)', () => {
    expect(doc).toMatchObject({
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      metadata: { name: 'train' },
      spec: {
        replicas: 1,
        // RecreateGroupOnPodRestart recreates the group on an init container's first restart
        // (lws v0.6.3, v0.10.0 pkg/utils/pod/pod_utils.go ContainerRestarted).
        leaderWorkerTemplate: { size: 2, restartPolicy: 'None' },
      },
    });
    // One template for leader and workers: LWS_WORKER_INDEX tells them apart.
    expect(doc.spec.leaderWorkerTemplate.leaderTemplate).toBeUndefined();
  });

  it('runs the pre-flight, then tini -- nccl-run with the processes per node in underscore spelling', () => {
    const pod = doc.spec.leaderWorkerTemplate.workerTemplate.spec;
    expectPreflight(pod);
    const [container] = pod.containers;
    expect(container.resources.limits['nvidia.com/gpu']).toBe(8);
    expectLaunch(container, ['--nproc_per_node=8', 'train.py']);
  });
});

describe('pytorchjob', () => {
  const doc: Doc = parseYaml(templateText('pytorchjob'));

  it('is a PyTorchJob with one master and the workers asked for', () => {
    expect(doc).toMatchObject({
      apiVersion: 'kubeflow.org/v1',
      kind: 'PyTorchJob',
      metadata: { name: 'train' },
    });
    expect(doc.spec.nprocPerNode).toBe('8');
    expect(doc.spec.pytorchReplicaSpecs.Master.replicas).toBe(1);
    expect(doc.spec.pytorchReplicaSpecs.Worker.replicas).toBe(1);
  });

  it.each(['Master', 'Worker'])(
    '%s pods run tini -- nccl-run, copied in by the init container, in the image, GPUs and port the operator reads',
    (role) => {
      const pod = doc.spec.pytorchReplicaSpecs[role].template.spec;
      const [container] = pod.containers;
      // The operator finds the container named "pytorch" and its port named "pytorchjob-port".
      expect(container.name).toBe('pytorch');
      expect(container.ports).toEqual([{ name: 'pytorchjob-port', containerPort: 23456 }]);
      expect(container.image).toBe('pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime');
      expect(container.resources.limits['nvidia.com/gpu']).toBe(8);
      // The small nccl-run image (Dockerfile.example on a slim base) holds both files.
      expectPreflight(pod, 'local');
      expect(pod.initContainers[0].env.map((v: Doc) => v.name)).toEqual([
        'PET_NNODES',
        'PYTORCHJOB_NAME',
        'PYTORCHJOB_REPLICA_TYPE',
        'PYTORCHJOB_REPLICA_INDEX',
      ]);
      expect(container.command).toEqual(['/nccl-run/tini-static', '--', '/nccl-run/nccl-run']);
      expect(splitArgv(container.args)).toMatchObject({
        flags: {
          verify: 'master',
          'verify-timeout': '5m',
          'network-status': '/etc/podinfo/annotations',
        },
        torchrun: ['train.py'],
      });
      expect(pod.volumes).toEqual([
        { name: 'nccl-run', emptyDir: {} },
        { name: 'dshm', emptyDir: { medium: 'Memory' } },
        {
          name: 'podinfo',
          downwardAPI: {
            items: [{ path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } }],
          },
        },
      ]);
      expect(container.volumeMounts).toContainEqual({
        name: 'podinfo',
        mountPath: '/etc/podinfo',
        readOnly: true,
      });
    },
  );
});

describe('compose', () => {
  // Compose reads YAML 1.1 merge keys (`<<: *node`).
  const doc: Doc = parseYaml(templateText('compose'), { merge: true });
  const subnet = (name: string) => {
    const [address, prefix] = doc.networks[name].ipam.config[0].subnet.split('/');
    const list = new BlockList();
    list.addSubnet(address, Number(prefix));
    return list;
  };

  it('runs two nodes of one job, each on the data and the management network', () => {
    expect(Object.keys(doc.services)).toEqual(['node0', 'node1']);
    const data = subnet('data');
    const mgmt = subnet('mgmt');
    for (const [rank, name] of ['node0', 'node1'].entries()) {
      const service = doc.services[name];
      expect(service.image).toBe('nccl-run-train:latest');
      expect(data.check(service.networks.data.ipv4_address)).toBe(true);
      expect(mgmt.check(service.networks.mgmt.ipv4_address)).toBe(true);
      const { flags, torchrun } = splitArgv(service.command);
      expect(flags).toEqual({});
      expect(torchrun).toContain(`--node_rank=${rank}`);
      expect(torchrun).toContain('--nnodes=2');
      expect(torchrun.at(-1)).toBe('train.py');
    }
  });

  it("points both nodes at node0's data address, so the subnet strategy can find the data interface", () => {
    const masterAddr = (name: string) =>
      (doc.services[name].command as string[])
        .find((arg) => arg.startsWith('--master_addr='))
        ?.split('=')[1];
    expect(masterAddr('node0')).toBe(doc.services.node0.networks.data.ipv4_address);
    expect(masterAddr('node1')).toBe(doc.services.node0.networks.data.ipv4_address);
  });

  it("resolves every node's hostname to its management address, whatever order Docker attaches the networks in", () => {
    // Docker appends a hostname line per network in an order that changes
    // between runs; extra_hosts lines come before them (the Docker tier runs it).
    const mgmtNames = Object.entries(doc.services).map(
      ([name, service]: [string, Doc]) =>
        `${service.hostname}:${doc.services[name].networks.mgmt.ipv4_address}`,
    );
    for (const name of ['node0', 'node1']) {
      expect(doc.services[name].hostname).toBe(name);
      expect(doc.services[name].extra_hosts).toEqual(mgmtNames);
    }
  });

  it('configures nccl-run through NCCL_RUN_* variables it accepts', () => {
    const environment = doc.services.node0.environment as Record<string, string>;
    const { options } = settleOptions({}, environment, tempDir());
    expect(options).toMatchObject({ verify: 'master', verifyTimeout: 120_000 });
  });
});

describe('env', () => {
  const text = templateText('env');

  it('is read by nccl-run as the defaults it writes out', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'nccl-run.env'), text);
    const { options, envFileExtras } = settleOptions({}, {}, dir);
    expect(options).toMatchObject({
      strategy: ['explicit', 'local', 'multus', 'subnet', 'route', 'speed'],
      verify: 'master',
      verifyTimeout: 60_000,
      cluster: 'auto',
      envFile: join(dir, 'nccl-run.env'),
    });
    expect(envFileExtras).toEqual({});
  });

  it('with every commented example switched on, is still a valid env file', () => {
    const dir = tempDir();
    // --min-bandwidth's and --min-bus-bandwidth's examples need the peers and
    // collective levels, which the file's default is not.
    const uncommented = text
      .replace(/^# ((NCCL_RUN_[A-Z_]+|NCCL_[A-Z_]+|TORCH_[A-Z_]+)=)/gm, '$1')
      .replace(/^NCCL_RUN_VERIFY=master$/m, 'NCCL_RUN_VERIFY=collective');
    writeFileSync(join(dir, 'nccl-run.env'), uncommented);
    const settled = settleOptions({}, {}, dir);
    expect(settled.options).toMatchObject({
      iface: ['ens3f0'],
      probePort: 29501,
      torchrun: ['python3', '-m', 'torch.distributed.run'],
    });
    expect(settled.envFileExtras).toEqual({
      NCCL_IB_HCA: 'mlx5',
      TORCH_NCCL_ASYNC_ERROR_HANDLING: '1',
    });
  });

  it('documents every option that an env file can set', () => {
    const keys = new Set(Object.keys(parseDotenv(text.replace(/^# (NCCL_RUN_)/gm, '$1'))));
    // An env file cannot name another env file.
    const settable = Object.keys(OPTIONS).filter((name) => name !== 'env-file');
    expect(settable.map(envNameOf).filter((name) => !keys.has(name))).toEqual([]);
  });
});

describe('docker', () => {
  const dockerfile = templateText('docker');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));

  it('is Dockerfile.example', () => {
    expect(dockerfile).toBe(readFileSync(join(root, 'Dockerfile.example'), 'utf8'));
  });

  it('has no `# syntax=` line: BuildKit would fetch that front end from Docker Hub, and fail offline', () => {
    expect(dockerfile).not.toMatch(/^#\s*syntax\s*=/im);
  });

  it('uses nothing the classic builder lacks (Docker 20.10 builds with it by default): no --chmod, --link, RUN --mount', () => {
    expect(instructions.filter((line) => /--chmod|--link|--mount|<</.test(line))).toEqual([]);
  });

  it('is one stage on a PyTorch CUDA runtime image: no Node.js image, no npm', () => {
    expect(dockerfile).toMatch(
      /^ARG PYTORCH_IMAGE=pytorch\/pytorch:[\d.]+-cuda[\d.]+-cudnn\d+-runtime$/m,
    );
    expect(instructions.filter((line) => line.startsWith('FROM '))).toEqual([
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Dockerfile ARG reference
      'FROM ${PYTORCH_IMAGE}',
    ]);
    expect(instructions.filter((line) => /\b(node|npm)\b/i.test(line))).toEqual([]);
  });

  it('copies one file, the single executable `npm run release` writes, named by NCCL_RUN_BINARY, and runs it under tini', () => {
    // scripts/release.js's PLATFORMS names the files.
    expect(instructions).toContain('ARG NCCL_RUN_BINARY=release/nccl-run-linux-x64');
    expect(instructions.filter((line) => /^(COPY|ADD) /.test(line))).toEqual([
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Dockerfile ARG reference
      'COPY ${NCCL_RUN_BINARY} /usr/local/bin/nccl-run',
    ]);
    // The comments say how to get it, for either architecture.
    expect(dockerfile).toContain('`npm run release`');
    expect(dockerfile).toContain('release/nccl-run-linux-arm64');
    expect(instructions).toContain('RUN nccl-run --version');
    expect(instructions).toContain('ENTRYPOINT ["/usr/bin/tini", "--", "nccl-run"]');
    expect(instructions).toContain('CMD ["explain"]');
  });
});

describe('runInit', () => {
  const capture = () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };

  it('prints the template to stdout without --out', async () => {
    const out = capture();
    expect(await runInit({ template: 'env', out: null, force: false }, out.stream)).toBe(0);
    expect(out.text()).toBe(templateText('env'));
  });

  it('writes --out, and refuses to replace it without --force (usage error, exit 64)', async () => {
    const path = join(tempDir(), 'job.sbatch');
    const out = capture();
    expect(await runInit({ template: 'slurm', out: path, force: false }, out.stream)).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(templateText('slurm'));
    expect(out.text()).toBe('');

    writeFileSync(path, 'my edits\n');
    const again = runInit({ template: 'slurm', out: path, force: false }, out.stream);
    await expect(again).rejects.toThrow(UsageError);
    await expect(
      runInit({ template: 'slurm', out: path, force: false }, out.stream),
    ).rejects.toThrow(
      `--out ${path}: the file exists; add --force to replace it, or choose another path`,
    );
    expect(readFileSync(path, 'utf8')).toBe('my edits\n');
    expect(new UsageError('').exitCode).toBe(64);

    expect(await runInit({ template: 'slurm', out: path, force: true }, out.stream)).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(templateText('slurm'));
  });

  it.each([
    [
      { template: undefined },
      'init: which template? valid: slurm, k8s, pytorchjob, lws, docker, compose, env',
    ],
    [
      { template: 'helm' },
      "init: unknown template 'helm'; valid: slurm, k8s, pytorchjob, lws, docker, compose, env",
    ],
    [
      { template: 'env', out: '/nonexistent-dir/nccl-run.env' },
      '--out /nonexistent-dir/nccl-run.env: the folder /nonexistent-dir does not exist; create it first, or choose another path',
    ],
  ])('%j → usage error', async (args, message) => {
    const run = runInit({ out: null, force: false, ...args }, capture().stream);
    await expect(run).rejects.toThrow(UsageError);
    await expect(runInit({ out: null, force: false, ...args }, capture().stream)).rejects.toThrow(
      message,
    );
  });
});
