/** The report's command (report.ts): `node report.mjs WORK OUT`, bundled by prepare.sh. */
import { report } from './report.js';

const [work, out] = process.argv.slice(2);
if (work === undefined || out === undefined) {
  process.stderr.write('usage: node report.mjs WORK OUT\n');
  process.exitCode = 64;
} else {
  process.exitCode = report(work, out);
}
