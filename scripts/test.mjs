// `npm test`: every package's unit tests, then the end-to-end (Playwright) tests.
// Installs what is missing first (npm packages; as root on Debian/Ubuntu the apt
// packages), so a new machine needs only this command. Tests that need what is
// still missing (root, Chromium) skip themselves and print why.
import { checkNodeVersion, EDGE_APT_PACKAGES, ensureAptPackages, ensureNpmDependencies, NGINX_APT_PACKAGES, run, say } from './setup.mjs';

checkNodeVersion();
ensureNpmDependencies();
const missing = ensureAptPackages([...new Set(['ffmpeg', 'chromium', 'iproute2', 'tcpdump', 'iputils-ping', 'gcc', 'libc6-dev', 'openssl', ...EDGE_APT_PACKAGES, ...NGINX_APT_PACKAGES])]);
if (missing.length > 0) say(`tests that need ${missing.join(', ')} will be skipped`);

const steps = [
  ['typecheck', ['run', 'typecheck']],
  ['unit tests', ['test', '--workspaces', '--if-present']],
  ['end-to-end tests', ['run', 'test:e2e', '-w', 'e2e', '--if-present']],
];
const failed = [];
for (const [name, args] of steps) {
  say(`== ${name}`);
  if (run('npm', args) !== 0) failed.push(name);
}
if (failed.length > 0) {
  say(`FAILED: ${failed.join(', ')}`);
  process.exit(1);
}
say('all tests passed');
