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
import { listeningLine } from '@sammy/server/process';
import { parseEdgeCli, USAGE } from './args.js';
import { startEdge } from './edge.js';
import { EdgeError } from './options.js';

async function main(): Promise<number> {
  const input = parseEdgeCli(process.argv.slice(2));
  if (input === 'help') {
    console.log(USAGE);
    return 0;
  }
  const edge = await startEdge(input);
  let stopping: Promise<number> | null = null;
  const shutdown = (): Promise<number> => (stopping ??= edge.stop().then(() => 0));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void shutdown().then((code) => process.exit(code)));
  process.stderr.write(`edge: Traffic Server in front of ${edge.options.originUrl}; telemetry lines in ${edge.telemetryLog}\n`);
  // The one line scripts wait for (docs/server-contract.md).
  process.stdout.write(listeningLine(edge.options.host, edge.port));
  const code = await edge.process.exited;
  if (stopping !== null) return stopping;
  await edge.stop();
  process.stderr.write(`edge: Traffic Server exited unexpectedly (${code}): ${edge.process.stderr().trim().split('\n').slice(-5).join('\n')}\n`);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const code = err instanceof EdgeError ? err.code : ((err as { code?: string }).code ?? 'SAMMY_EDGE_FAILED');
    console.error(`edge: ${code}: ${(err as Error).message}`);
    process.exit(2);
  },
);
