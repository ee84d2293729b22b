#!/usr/bin/env node
/**
 * npm run serve -- --media DIR [--port 8080] [--host 127.0.0.1] [--burst-packets 4]
 *   [--burst-mode auto|app|kernel] [--body-path auto|sendfile|stream] [--pacing on|off] [--spiral-guard on|off] [--spiral-guard-multiplier X]
 *   [--min-rate-kbps N] [--max-rate-kbps N]
 *   [--log FILE] [--log-level info] [--player DIR] [--cors-origin ORIGIN|*]
 *   [--workers N] [--tls-cert FILE --tls-key FILE [--http2]]
 */
import { buildApp } from './app.js';
import { cliMessage, parseCli, USAGE } from './args.js';
import { ServerError } from './errors.js';
import { resolveServerOptions, type ServerOptionsInput } from './options.js';
import { listeningLine } from './process.js';
import { isWorkerProcess, runPrimary, runWorker } from './workers.js';

/** --workers 1: the server in this process, as buildApp() makes it. */
async function serveInProcess(input: ServerOptionsInput): Promise<void> {
  const app = await buildApp(input);
  const { host, port, tls } = app.sammy.options;
  await app.listen({ host, port });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  // The one line scripts wait for (docs/server-contract.md); its writer and reader are in process.ts.
  process.stdout.write(listeningLine(host, boundPort, tls === null ? 'http' : 'https'));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}

async function main(): Promise<void> {
  const input = parseCli(process.argv.slice(2));
  if (input === 'help') {
    console.log(USAGE);
    return;
  }
  // A worker of --workers N runs this same command line (cluster forks it).
  if (isWorkerProcess()) return runWorker(input);
  // Every option is checked before a worker starts.
  const options = resolveServerOptions(input);
  if (options.workers > 1) return runPrimary(options);
  return serveInProcess(input);
}

main().catch((err: unknown) => {
  const code = err instanceof ServerError ? err.code : ((err as { code?: string }).code ?? 'SAMMY_SERVER_ERROR');
  const message = err instanceof ServerError ? cliMessage(err) : (err as Error).message;
  console.error(`serve: ${code}: ${message}`);
  process.exit(2);
});
