/** --help, --version and bash completion: yargs renders them, loaded only for them (start-up time). */
import { embeddedNode, packageVersion } from '../../package-version.js';

export async function helpCommand(): Promise<number> {
  const { buildParser, EPILOGUE, USAGE } = await import('../parser.js');
  process.stdout.write(`${USAGE}\n\n${await buildParser().getHelp()}\n\n${EPILOGUE}\n`);
  return 0;
}

export function versionCommand(): number {
  const node = embeddedNode();
  // SPEC "Distribution": the single executable names the Node it embeds.
  process.stdout.write(
    `${packageVersion()}${node === undefined ? '' : ` (single executable, Node ${node})`}\n`,
  );
  return 0;
}

/** `nccl-run completion` prints the script; the script calls back with --get-yargs-completions. */
export async function completionCommand(argv: readonly string[]): Promise<number> {
  const { buildParser } = await import('../parser.js');
  if (argv[0] === '--get-yargs-completions') await buildParser().parseAsync([...argv]);
  else buildParser().showCompletionScript();
  return 0;
}
