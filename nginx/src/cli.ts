#!/usr/bin/env node
/**
 * npm run nginx -- --media DIR [--port 8080] [--host 127.0.0.1] [--player DIR] [--workers N]
 *   [--pacing on|off] [--spiral-guard on|off] [--spiral-guard-multiplier X] [--min-rate-kbps N]
 *   [--max-rate-kbps N] [--query-cmcd on|off] [--tail-hold on|off] [--log FILE]
 *   [--tls-cert FILE --tls-key FILE] [--http2 on|off] [--cors-origin ORIGIN|*]
 *
 * Builds the module, writes an nginx configuration into a temporary folder, runs nginx
 * in the foreground and prints `listening on http://HOST:PORT` (the server's contract,
 * docs/server-contract.md) once it answers. SIGINT and SIGTERM stop it and remove the
 * folder. (`npm run nginx` first installs nginx-core, nginx-dev and a compiler as root:
 * scripts/nginx.mjs.)
 */
import { holdInForeground, listeningLine, runCommandLine } from '@sammy/server/process';
import { parseNginxCli, USAGE } from './args.js';
import { startNginx } from './nginx.js';

async function main(): Promise<number> {
  const input = parseNginxCli(process.argv.slice(2));
  if (input === 'help') {
    console.log(USAGE);
    return 0;
  }
  const nginx = await startNginx(input);
  const o = nginx.options;
  return holdInForeground({
    name: 'nginx',
    what: 'nginx',
    server: nginx,
    announce: () => {
      const h2 = o.http2 ? ' (HTTP/2: a connection paced at the sum of its streams)' : '';
      process.stderr.write(`nginx: ${o.workers} worker(s) from ${nginx.prefix}${h2}; telemetry lines in ${nginx.telemetryLog}\n`);
      // The one line scripts wait for (docs/server-contract.md).
      process.stdout.write(listeningLine(o.host, nginx.port, o.tls === null ? 'http' : 'https'));
    },
    why: () => `${nginx.process.stderr().trim()}\n${nginx.errorLogTail()}`.trim(),
  });
}

runCommandLine('nginx', main, 'SAMMY_NGINX_FAILED');
