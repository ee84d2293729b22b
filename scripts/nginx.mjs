// `npm run nginx`: Debian's nginx with the Sammy module, serving a ladder and the player
// page as `npm run serve` does. Installs what is missing first (as root: nginx-core,
// nginx-dev, a C compiler and make with apt-get; otherwise it prints the exact command),
// then runs nginx/src/cli.ts in the foreground, passing on SIGINT and SIGTERM so it can
// stop nginx and remove its temporary folder.
//
//   npm run nginx -- --media DIR [--port 8080] [--host 127.0.0.1] [--pacing on|off] [--log FILE] [--tls-cert F --tls-key F]
import { join } from 'node:path';
import { checkNodeVersion, ensureAptPackages, ensureNpmDependencies, NGINX_APT_PACKAGES, ROOT, runInForeground, say } from './setup.mjs';

checkNodeVersion();
ensureNpmDependencies();
const missing = ensureAptPackages(NGINX_APT_PACKAGES);
if (missing.length > 0) {
  say(`nginx with the Sammy module needs ${missing.join(', ')}`);
  process.exit(1);
}
runInForeground(join(ROOT, 'nginx', 'src', 'cli.ts'), join(ROOT, 'nginx'));
