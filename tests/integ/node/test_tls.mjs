// node-redis and ioredis over TLS with client certificates, in RESP2 and
// RESP3: the commands, a pipeline and a big reply arrive as on plain TCP,
// and a client without a certificate is turned away. Certificates are made
// at run time by ../../support/tls_certs.py (openssl).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import Redis from 'ioredis';
import { startDaemon, freePort, isRedis } from './daemon.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const skip = isRedis ? 'cuckood TLS suite' : false;

let daemon, tlsPort, certDir, tls;
before(async () => {
  if (isRedis) return;
  certDir = mkdtempSync(path.join(os.tmpdir(), 'cuckood-certs-'));
  execFileSync('/usr/bin/python3', [path.join(HERE, '..', '..', 'support', 'tls_certs.py'),
                                    certDir]);
  const f = (n) => path.join(certDir, n);
  tlsPort = await freePort();
  daemon = await startDaemon({ args: [
    '--tls-port', String(tlsPort), '--tls-cert-file', f('server.crt'),
    '--tls-key-file', f('server.key'), '--tls-ca-cert-file', f('ca.crt'),
    '--tls-auth-clients', 'yes'] });
  tls = {
    ca: readFileSync(f('ca.crt')), cert: readFileSync(f('client.crt')),
    key: readFileSync(f('client.key')), servername: 'localhost',
  };
});
after(async () => {
  if (daemon) await daemon.stop();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

for (const RESP of [2, 3]) {
  describe(`node-redis over TLS, RESP${RESP}`, { skip }, () => {
    let client;
    const k = (n) => `nr-tls-${RESP}:${n}`;
    before(async () => {
      client = createClient({
        RESP,
        socket: { host: '127.0.0.1', port: tlsPort, tls: true, ...tls,
                  reconnectStrategy: false },
      });
      client.on('error', () => {});
      await client.connect();
    });
    after(async () => { await client.quit(); });

    test('ping, CF commands, pipeline, big reply', async () => {
      assert.equal(await client.ping(), 'PONG');
      assert.equal(await client.sendCommand(['CF.RESERVE', k('f'), '1000000']),
                   'OK');
      assert.equal(await client.sendCommand(['CF.ADD', k('f'), 'a']),
                   RESP === 2 ? 1 : true);
      const multi = client.multi();
      for (let i = 0; i < 2000; i++) multi.addCommand(['CF.ADD', k('f'), `i${i}`]);
      const added = await multi.execAsPipeline();
      assert.equal(added.length, 2000);
      assert.deepEqual(
        await client.sendCommand(['CF.MEXISTS', k('f'), 'i0', 'i1999', 'no']),
        RESP === 2 ? [1, 1, 0] : [true, true, false]);
      const big = 'x'.repeat(3 << 20);
      assert.equal(await client.echo(big), big);
      const hello = await client.sendCommand(['HELLO']);
      assert.ok(hello);
    });
  });

  describe(`ioredis over TLS, protocol ${RESP}`, { skip }, () => {
    let r;
    const k = (n) => `io-tls-${RESP}:${n}`;
    before(async () => {
      r = new Redis({ host: '127.0.0.1', port: tlsPort, protocol: RESP,
                      tls, lazyConnect: true, maxRetriesPerRequest: 0,
                      retryStrategy: () => null });
      r.on('error', () => {});
      await r.connect();
    });
    after(async () => { await r.quit(); });

    test('ready check, CF commands, pipeline, big reply', async () => {
      assert.equal(r.status, 'ready');
      assert.equal(await r.ping(), 'PONG');
      assert.equal(await r.call('CF.RESERVE', k('f'), 1000000), 'OK');
      assert.equal(await r.call('CF.ADD', k('f'), 'a'), 1);
      const p = r.pipeline();
      for (let i = 0; i < 2000; i++) p.call('CF.ADD', k('f'), `i${i}`);
      const res = await p.exec();
      assert.equal(res.length, 2000);
      assert.ok(res.every(([err, v]) => err === null && v === 1));
      assert.deepEqual(await r.call('CF.MEXISTS', k('f'), 'i0', 'i1999', 'no'),
                       [1, 1, 0]);
      const big = 'y'.repeat(3 << 20);
      assert.equal(await r.echo(big), big);
    });
  });
}

test('a client without a certificate is refused', { skip }, async () => {
  const { cert, key, ...noCert } = tls;
  const r = new Redis({ host: '127.0.0.1', port: tlsPort, tls: noCert,
                        lazyConnect: true, maxRetriesPerRequest: 0,
                        retryStrategy: () => null, connectTimeout: 10000 });
  r.on('error', () => {});
  await assert.rejects(async () => { await r.connect(); await r.ping(); });
  r.disconnect();
  const client = createClient({
    socket: { host: '127.0.0.1', port: tlsPort, tls: true, ...noCert,
              reconnectStrategy: false },
  });
  client.on('error', () => {});
  await assert.rejects(async () => { await client.connect(); await client.ping(); });
  try { await client.disconnect(); } catch {}
});
