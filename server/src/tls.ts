// HTTPS (--tls-cert FILE --tls-key FILE): HTTP/1.1 over Node's TLS. Pacing is
// unchanged: a TLS socket's handle carries the descriptor of the TCP socket under
// it, so SO_MAX_PACING_RATE and TCP_INFO act on the connection that carries the
// records. What TLS changes is what leaves per write: every record adds its header
// and tag, and the bytes are encrypted in user space, so nothing can go from the
// file to the socket without passing through the process (README "HTTPS").
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { invalidOption } from './errors.js';

export interface TlsFiles {
  /** PEM certificate (chain), leaf first. */
  certFile: string;
  /** PEM private key of the leaf certificate. */
  keyFile: string;
}

export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

/**
 * Bytes a TLS record adds to the plaintext it carries: 5 (header) + 8 (explicit
 * nonce) + 16 (GCM tag) in TLS 1.2 AES-GCM, the largest of the suites Node offers
 * by default (TLS 1.3 adds 5 + 1 + 16 = 22). Application-timed bursts subtract it so
 * that N x MSS on the wire is N x MSS, not N x MSS plus a few bytes in one more packet.
 */
export const TLS_RECORD_OVERHEAD_BYTES = 29;
/** The largest plaintext one record holds (RFC 8446 section 5.1); Node fills records up to it. */
export const TLS_MAX_RECORD_PLAINTEXT_BYTES = 16_384;

/** Plaintext per write so that the records it becomes take at most `wireBytes` on the wire. */
export function plaintextBytesForWire(wireBytes: number): number {
  const records = Math.ceil(wireBytes / (TLS_MAX_RECORD_PLAINTEXT_BYTES + TLS_RECORD_OVERHEAD_BYTES));
  return Math.max(1, wireBytes - records * TLS_RECORD_OVERHEAD_BYTES);
}

function readPem(option: string, path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw invalidOption(option, path, `a readable ${what} file (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/** The certificate and key, checked to form a pair Node can serve with; throws a coded option error otherwise. */
export function readTlsCredentials(files: TlsFiles): TlsCredentials {
  const cert = readPem('tls.certFile', files.certFile, 'PEM certificate');
  const key = readPem('tls.keyFile', files.keyFile, 'PEM private key');
  const refuse = (option: 'tls.certFile' | 'tls.keyFile', accepted: string, err: unknown): never => {
    throw invalidOption(option, option === 'tls.certFile' ? files.certFile : files.keyFile, `${accepted} (${(err as Error).message})`);
  };
  try {
    new X509Certificate(cert);
  } catch (err) {
    refuse('tls.certFile', 'a PEM certificate', err);
  }
  try {
    createPrivateKey(key);
  } catch (err) {
    refuse('tls.keyFile', 'a PEM private key', err);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    // Both parse: the key is not the certificate's.
    refuse('tls.keyFile', 'the private key of the certificate in --tls-cert', err);
  }
  return { cert, key };
}

/** Validates the option (both files given, readable, a pair) and returns absolute paths. */
export function checkTlsFiles(input: unknown): TlsFiles {
  const o = input as Partial<TlsFiles> | null;
  for (const field of ['certFile', 'keyFile'] as const) {
    const value = o?.[field];
    if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) {
      throw invalidOption(`tls.${field}`, value ?? null, 'a file path (a certificate and its key are given together)');
    }
  }
  const files = { certFile: resolve(o!.certFile!), keyFile: resolve(o!.keyFile!) };
  readTlsCredentials(files);
  return files;
}
