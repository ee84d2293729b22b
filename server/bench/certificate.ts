// A throw-away self-signed certificate for the bench and the tests (made with the
// openssl command line: Node can use certificates but not make them).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SelfSignedCert {
  certFile: string;
  keyFile: string;
  cert: Buffer;
}

/** null when `openssl` runs, else why not (callers that need a certificate skip with this reason). */
export function opensslMissing(): string | null {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'openssl is not installed (apt-get install openssl; npm test installs it as root)';
  }
}

/** A self-signed certificate for `ips` and localhost (P-256, one day), written to `dir`. */
export function makeSelfSignedCert(dir: string, name = 'server', ips = ['127.0.0.1']): SelfSignedCert {
  const certFile = join(dir, `${name}-cert.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
  const altNames = [...ips.map((ip) => `IP:${ip}`), 'DNS:localhost'].join(',');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', `subjectAltName=${altNames}`, '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { certFile, keyFile, cert: readFileSync(certFile) };
}
