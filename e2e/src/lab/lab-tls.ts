/**
 * The lab's own certificate, for `server.protocol` h1-tls and h2: made once per run for
 * the server namespace's address (openssl; one day), handed to the video server, and
 * trusted by Chromium by its public key alone (`--ignore-certificate-errors-spki-list`
 * takes the base64 SHA-256 of the key's SubjectPublicKeyInfo). A browser that trusts the
 * certificate caches and reuses connections as it does with a real one; a browser told
 * to ignore certificate errors would do neither.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeSelfSignedCert, opensslMissing } from '@sammy/server/certificate';
import { LabError } from '../lab-error.js';
import { ADDRESSES } from './topology.js';

export interface LabCertificate {
  certFile: string;
  keyFile: string;
  /** base64(SHA-256(SubjectPublicKeyInfo)): what Chromium's SPKI list names. */
  spkiSha256: string;
}

/** The base64 SHA-256 of a PEM certificate's public key, as Chromium's SPKI list takes it. */
export function spkiSha256(certPem: Buffer | string): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/** A certificate for the lab's video server address, in `dir` (the run's output). */
export function makeLabCertificate(dir: string): LabCertificate {
  const missing = opensslMissing();
  if (missing !== null) throw new LabError('LAB_TLS', `server.protocol over TLS needs a certificate: ${missing}`);
  mkdirSync(dir, { recursive: true });
  const cert = makeSelfSignedCert(dir, 'lab-server', [ADDRESSES.server, '127.0.0.1']);
  return { certFile: cert.certFile, keyFile: cert.keyFile, spkiSha256: spkiSha256(cert.cert) };
}

/** Chromium's flag that trusts exactly this certificate's key. */
export function chromiumTrustArgs(cert: LabCertificate | null): string[] {
  return cert === null ? [] : [`--ignore-certificate-errors-spki-list=${cert.spkiSha256}`];
}
