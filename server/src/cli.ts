#!/usr/bin/env node
/**
 * npm run serve -- --media DIR [--port 8080] [--host 127.0.0.1] [--burst-packets 4]
 *   [--burst-mode auto|app|kernel] [--body-path auto|sendfile|stream] [--pacing on|off] [--min-rate-kbps N] [--max-rate-kbps N]
 *   [--log FILE] [--log-level info] [--player DIR] [--cors-origin ORIGIN|*]
 */
import { buildApp } from './app.js';
import { cliMessage, parseCli, USAGE } from './args.js';
import { ServerError } from './errors.js';
import { listeningLine } from './process.js';

async function main(): Promise<void> {
  const input = parseCli(process.argv.slice(2));
  if (input === 'help') {
    console.log(USAGE);
    return;
  }
  const app = await buildApp(input);
  const { host, port } = app.sammy.options;
  await app.listen({ host, port });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  // The one line scripts wait for (docs/server-contract.md); its writer and reader are in process.ts.
  process.stdout.write(listeningLine(host, boundPort));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}

main().catch((err: unknown) => {
  const code = err instanceof ServerError ? err.code : ((err as { code?: string }).code ?? 'SAMMY_SERVER_ERROR');
  const message = err instanceof ServerError ? cliMessage(err) : (err as Error).message;
  console.error(`serve: ${code}: ${message}`);
  process.exit(2);
});
