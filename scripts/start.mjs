// `npm start`: the local demo on a fresh machine. Installs what is missing (or says
// exactly what to install), encodes the sample ladder once into media/, builds the
// player, starts the server and prints the URL. `--server nginx` serves with nginx and
// the Sammy module (`npm run nginx`, which installs nginx) instead of the Node server.
//
//   npm start -- [--port 8080] [--host 127.0.0.1] [--media DIR] [--seconds 60] [--ladder lab|hd|FILE] [--pacing on|off]
//                [--server node|nginx]
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkNodeVersion, ensureAptPackages, ensureNpmDependencies, ROOT, run, say } from './setup.mjs';

const SERVERS = ['node', 'nginx'];

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.PORT ?? '8080' },
    host: { type: 'string', default: process.env.HOST ?? '127.0.0.1' },
    media: { type: 'string', default: join(ROOT, 'media') },
    seconds: { type: 'string', default: '60' },
    ladder: { type: 'string', default: 'lab' },
    // off: an origin behind an edge that paces (docker compose --profile edge).
    pacing: { type: 'string', default: 'on' },
    // nginx: the same page and ladder served by nginx with the Sammy module (docker compose --profile nginx).
    server: { type: 'string', default: 'node' },
  },
});
if (!SERVERS.includes(values.server)) {
  say(`--server ${values.server}: use one of ${SERVERS.join(', ')}`);
  process.exit(2);
}

checkNodeVersion();
ensureNpmDependencies();
if (ensureAptPackages(['ffmpeg']).length > 0) process.exit(1);

const media = resolve(values.media);
if (!existsSync(join(media, 'manifest.mpd')) || !existsSync(join(media, 'segments.json'))) {
  say(`encoding the sample ladder (${values.ladder}, ${values.seconds} s synthetic) into ${media} (once)...`);
  const status = run('npm', ['run', '--silent', 'encode', '--', '--synthetic', values.seconds, '--ladder', values.ladder, '--out', media]);
  if (status !== 0) process.exit(status);
} else if (!existsSync(join(media, 'manifest.m3u8'))) {
  // A ladder encoded before the encoder wrote HLS: add the playlists, no re-encode.
  if (run('npm', ['run', '--silent', 'encode', '--', '--add-hls', media]) !== 0) process.exit(1);
}

say('building the player...');
if (run('npm', ['run', '--silent', 'build']) !== 0) process.exit(1);

const serving = ['--media', media, '--port', values.port, '--host', values.host, '--pacing', values.pacing];
if (values.server === 'nginx') {
  say(`starting nginx with the Sammy module on http://${values.host}:${values.port}/ (Ctrl-C to stop)`);
  process.exit(run(process.execPath, [join(ROOT, 'scripts', 'nginx.mjs'), ...serving]));
}
say(`starting the server on http://${values.host}:${values.port}/ (Ctrl-C to stop)`);
process.exit(run('npm', ['run', '--silent', 'serve', '--', ...serving]));
