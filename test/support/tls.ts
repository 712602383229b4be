import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * A self-signed certificate for localhost and 127.0.0.1 (one day), made with openssl in `dir`;
 * throws when openssl is missing.
 */
export const makeTestCertificate = (dir: string): { cert: string; key: string } => {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
};
