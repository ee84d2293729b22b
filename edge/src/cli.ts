#!/usr/bin/env node
/**
 * npm run edge -- --origin URL [--port 8081] [--host 127.0.0.1] [--min-rate-kbps N]
 *   [--max-rate-kbps N] [--query-cmcd on|off] [--spiral-guard on|off] [--spiral-guard-multiplier X]
 *   [--log FILE] [--cache-mb 256]
 *
 * Builds the plugin, writes a Traffic Server configuration into a temporary folder,
 * runs Traffic Server in the foreground and prints `listening on http://HOST:PORT`
 * (the server's contract, docs/server-contract.md) once it answers. SIGINT and
 * SIGTERM stop it and remove the folder. (`npm run edge` first installs
 * trafficserver and trafficserver-dev as root: scripts/edge.mjs.)
 */
import { holdInForeground, listeningLine, runCommandLine } from '@sammy/server/process';
import { parseEdgeCli, USAGE } from './args.js';
import { startEdge } from './edge.js';

async function main(): Promise<number> {
  const input = parseEdgeCli(process.argv.slice(2));
  if (input === 'help') {
    console.log(USAGE);
    return 0;
  }
  const edge = await startEdge(input);
  return holdInForeground({
    name: 'edge',
    what: 'Traffic Server',
    server: edge,
    announce: () => {
      process.stderr.write(`edge: Traffic Server in front of ${edge.options.originUrl}; telemetry lines in ${edge.telemetryLog}\n`);
      // The one line scripts wait for (docs/server-contract.md).
      process.stdout.write(listeningLine(edge.options.host, edge.port));
    },
    why: () => edge.process.stderr().trim().split('\n').slice(-5).join('\n'),
  });
}

runCommandLine('edge', main, 'SAMMY_EDGE_FAILED');
