// `npm test`: every package's unit tests, again the main ones on Node 24 (scripts/node24.mjs
// says which and why), then the end-to-end (Playwright) tests.
// Installs what is missing first (npm packages; as root on Debian/Ubuntu the apt
// packages; Node 24 from the npm registry), so a new machine needs only this command.
// Tests that need what is still missing (root, Chromium) skip themselves and print why;
// without the npm registry the Node 24 pass is skipped, and fails on CI (CI=true).
import { ensureNode24, envWithNode, NODE24_MAJOR, NODE24_UNIT_TESTS } from './node24.mjs';
import { checkNodeVersion, EDGE_APT_PACKAGES, ensureAptPackages, ensureNpmDependencies, NGINX_APT_PACKAGES, run, say } from './setup.mjs';

checkNodeVersion();
ensureNpmDependencies();
const missing = ensureAptPackages([...new Set(['ffmpeg', 'chromium', 'iproute2', 'tcpdump', 'iputils-ping', 'gcc', 'libc6-dev', 'openssl', ...EDGE_APT_PACKAGES, ...NGINX_APT_PACKAGES])]);
if (missing.length > 0) say(`tests that need ${missing.join(', ')} will be skipped`);

const onCI = !['', '0', 'false'].includes(process.env.CI ?? '');

/** The unit tests of NODE24_UNIT_TESTS with `node` meaning Node 24: each package's own test script. */
function unitTestsOnNode24() {
  if (process.versions.node.split('.')[0] === String(NODE24_MAJOR)) {
    say(`skipped: this is Node ${process.versions.node}, the unit tests above ran on it`);
    return 0;
  }
  const node = ensureNode24();
  if (node.error !== undefined) {
    if (onCI) {
      say(`Node ${NODE24_MAJOR} is needed on CI (CI=${process.env.CI}): ${node.error}`);
      return 1;
    }
    say(`skipped (CI would fail here): ${node.error}`);
    return 0;
  }
  const env = envWithNode(node.bin);
  let status = 0;
  for (const { workspace, jestArgs } of NODE24_UNIT_TESTS) {
    say(`-- ${workspace} on Node ${NODE24_MAJOR}`);
    if (run('npm', ['test', '-w', workspace, '--', ...jestArgs], { env }) !== 0) status = 1;
  }
  return status;
}

const steps = [
  ['typecheck', () => run('npm', ['run', 'typecheck'])],
  ['unit tests', () => run('npm', ['test', '--workspaces', '--if-present'])],
  [`unit tests on Node ${NODE24_MAJOR}`, unitTestsOnNode24],
  ['end-to-end tests', () => run('npm', ['run', 'test:e2e', '-w', 'e2e', '--if-present'])],
];
const failed = [];
for (const [name, step] of steps) {
  say(`== ${name}`);
  const started = Date.now();
  if (step() !== 0) failed.push(name);
  say(`${name}: ${Math.round((Date.now() - started) / 1000)} s`);
}
if (failed.length > 0) {
  say(`FAILED: ${failed.join(', ')}`);
  process.exit(1);
}
say('all tests passed');
