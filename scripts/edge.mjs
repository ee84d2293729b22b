// `npm run edge`: a Traffic Server edge with the Sammy plugin in front of an origin.
// Installs what is missing first (as root: trafficserver, trafficserver-dev and a C
// compiler with apt-get; otherwise it prints the exact command), then runs the edge
// (edge/src/cli.ts) in the foreground, passing on SIGINT and SIGTERM so it can stop
// Traffic Server and remove its temporary folder.
//
//   npm run edge -- --origin URL [--port 8081] [--host 127.0.0.1] [--min-rate-kbps N] [--max-rate-kbps N] [--log FILE]
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { checkNodeVersion, EDGE_APT_PACKAGES, ensureAptPackages, ensureNpmDependencies, ROOT, say } from './setup.mjs';

checkNodeVersion();
ensureNpmDependencies();
const missing = ensureAptPackages(EDGE_APT_PACKAGES);
if (missing.length > 0) {
  say(`the edge needs ${missing.join(', ')}`);
  process.exit(1);
}
const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'edge', 'src', 'cli.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: join(ROOT, 'edge'),
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
