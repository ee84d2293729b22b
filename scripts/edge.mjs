// `npm run edge`: a Traffic Server edge with the Sammy plugin in front of an origin.
// Installs what is missing first (as root: trafficserver, trafficserver-dev and a C
// compiler with apt-get; otherwise it prints the exact command), then runs the edge
// (edge/src/cli.ts) in the foreground, passing on SIGINT and SIGTERM so it can stop
// Traffic Server and remove its temporary folder.
//
//   npm run edge -- --origin URL [--port 8081] [--host 127.0.0.1] [--min-rate-kbps N] [--max-rate-kbps N] [--log FILE]
import { join } from 'node:path';
import { checkNodeVersion, EDGE_APT_PACKAGES, ensureAptPackages, ensureNpmDependencies, ROOT, runInForeground, say } from './setup.mjs';

checkNodeVersion();
ensureNpmDependencies();
const missing = ensureAptPackages(EDGE_APT_PACKAGES);
if (missing.length > 0) {
  say(`the edge needs ${missing.join(', ')}`);
  process.exit(1);
}
runInForeground(join(ROOT, 'edge', 'src', 'cli.ts'), join(ROOT, 'edge'));
