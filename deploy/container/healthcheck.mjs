#!/usr/bin/env node
// The container's HEALTHCHECK: GET /healthz of the service in this container, over HTTPS when
// POWERPLAN_TLS_CERT is set (the same settings the service reads), else HTTP. Exit 0 when it
// answers 200, 1 otherwise, with one line saying why.
//
// With TLS it connects to the loopback address, where the certificate's name (a host name for the
// network) does not match and a private CA is not in Node's store; instead of verifying a name it
// checks that the server presents exactly the certificate in POWERPLAN_TLS_CERT, which is stronger.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const env = process.env;
const port = Number(env.POWERPLAN_PORT || 8750);
const host = env.POWERPLAN_HOST || '127.0.0.1';
// A wildcard listen address is reached on loopback; a specific one on itself.
const target =
  host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host.replace(/^\[|\]$/g, '');
const certFile = env.POWERPLAN_TLS_CERT;
const timeoutMs = Number(env.POWERPLAN_HEALTHCHECK_TIMEOUT_MS || 4000);

const fail = (why) => {
  process.stdout.write(`unhealthy: ${why}\n`);
  process.exit(1);
};

let expected;
if (certFile) {
  try {
    expected = new X509Certificate(readFileSync(certFile)).raw;
  } catch (e) {
    fail(`cannot read the TLS certificate ${certFile}: ${e.message}`);
  }
}

const options = {
  host: target,
  port,
  path: '/healthz',
  method: 'GET',
  timeout: timeoutMs,
  headers: { accept: 'application/json' },
  ...(expected ? { rejectUnauthorized: false } : {}),
};
const req = (expected ? httpsRequest : httpRequest)(options, (res) => {
  if (expected) {
    const presented = res.socket.getPeerCertificate?.()?.raw;
    if (!presented?.equals(expected)) {
      res.destroy();
      fail(`the server on ${target}:${port} does not present the certificate in ${certFile}`);
    }
  }
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    if (body.length < 65_536) body += chunk;
  });
  res.on('end', () => {
    if (res.statusCode !== 200) fail(`/healthz answered ${res.statusCode}`);
    let status;
    try {
      status = JSON.parse(body).status;
    } catch {
      fail('/healthz did not answer JSON');
    }
    process.stdout.write(`healthy: ${status}\n`);
    process.exit(0);
  });
});
req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
req.on('error', (e) => fail(`${expected ? 'https' : 'http'}://${target}:${port}/healthz: ${e.message}`));
req.end();
