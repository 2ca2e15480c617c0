/**
 * The Docker tier's package mirror, as an air-gapped site has one: a plain
 * HTTP server of one folder (a flat apt repository: Packages and the .debs
 * beside it, test/lab/docker-debs.sh), run inside the engine's network
 * namespace so the image build reaches it at docker0's address and nothing
 * else. Usage: node apt-mirror.mjs FOLDER ADDRESS PORT. Prints `listening`
 * once bound (what the tier waits on), then one line per request.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';

const [folder, address, port] = process.argv.slice(2);
const server = createServer((request, response) => {
  const path = normalize(decodeURIComponent(new URL(request.url, 'http://mirror').pathname));
  const file = join(folder, path);
  let size = -1;
  try {
    if (file.startsWith(folder) && statSync(file).isFile()) size = statSync(file).size;
  } catch {
    // not here: 404
  }
  process.stdout.write(`${request.method} ${path} ${size < 0 ? 404 : 200}\n`);
  if (size < 0) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-length': size });
  if (request.method === 'HEAD') response.end();
  else createReadStream(file).pipe(response);
});
server.listen(Number(port), address, () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
