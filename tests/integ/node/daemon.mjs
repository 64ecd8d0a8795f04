// Starts the daemon under test for the node suites: $CUCKOOD_BIN, else
// build/server/cuckood from the repository root; CUCKOOD_TEST_REDIS_SERVER=1
// uses the system's redis-server instead (CF tests are skipped there).
// The daemon gets a free port and a temporary directory; it is ready when
// PING answers (polled, bounded); stop() sends SIGTERM and waits.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, accessSync, constants, openSync, closeSync,
         readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..', '..');

export const isRedis = !['', '0', undefined].includes(
  process.env.CUCKOOD_TEST_REDIS_SERVER);

// Pass as the `skip` option of CF tests.
export const skipCf = isRedis ? 'CF commands: not in plain redis-server'
                              : false;

function binary() {
  if (isRedis) return 'redis-server';
  const bin = process.env.CUCKOOD_BIN ||
    path.join(ROOT, 'build', 'server', 'cuckood');
  accessSync(bin, constants.X_OK);
  return path.resolve(bin);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function probe(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let data = '';
    const done = (ok) => { sock.destroy(); resolve(ok); };
    sock.setTimeout(1000, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('*1\r\n$4\r\nPING\r\n'));
    sock.on('data', (d) => {
      data += d.toString();
      if (data.includes('\r\n')) {
        done(data.startsWith('+PONG') || data.startsWith('-NOAUTH'));
      }
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// args: more daemon arguments (the TLS suite passes its tls-* directives).
export async function startDaemon({ password, args: extra = [] } = {}) {
  const bin = binary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cuckood-node-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const args = ['--port', String(port), '--dir', dir,
                  '--bind', '127.0.0.1'];
    if (isRedis) args.push('--save', '', '--daemonize', 'no');
    if (password !== undefined) args.push('--requirepass', password);
    args.push(...extra);
    const logPath = path.join(dir, 'daemon.log');
    const logFd = openSync(logPath, 'a');
    const proc = spawn(bin, args, { cwd: dir,
                                    stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    let exited = null;
    const exitP = new Promise((resolve) => proc.on('exit', (code, sig) => {
      exited = { code, sig };
      resolve(exited);
    }));
    const deadline = Date.now() + 15000;
    let ready = false;
    while (Date.now() < deadline && exited === null) {
      if (await probe(port)) { ready = true; break; }
      await sleep(50);
    }
    if (ready) {
      return {
        port, dir, proc,
        async stop() {
          if (exited === null) proc.kill('SIGTERM');
          const t = setTimeout(() => proc.kill('SIGKILL'), 15000);
          const res = await exitP;
          clearTimeout(t);
          rmSync(dir, { recursive: true, force: true });
          return res;
        },
        log() { return readFileSync(logPath, 'utf8'); },
      };
    }
    if (exited === null) { proc.kill('SIGKILL'); await exitP; }
  }
  let log = '';
  try { log = readFileSync(path.join(dir, 'daemon.log'), 'utf8'); } catch {}
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`daemon did not start: ${bin}\n${log}`);
}
