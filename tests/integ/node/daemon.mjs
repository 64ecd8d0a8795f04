// Starts the daemon under test for the node suites: $CUCKOOD_BIN, else
// build/server/cuckood from the repository root; CUCKOOD_TEST_REDIS_SERVER=1
// uses the system's redis-server instead (CF tests are skipped there).
// The daemon gets a free port and a temporary directory; it is ready when
// its port answers INFO server with its own pid (polled, bounded); stop()
// sends SIGTERM and waits.

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

const encode = (args) => `*${args.length}\r\n` + args.map(
  (a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('');

// The process_id that INFO server reports on port (after AUTH when a
// password is given): a number, null while nothing answers, or the error
// line that came instead.
export function answeringPid(port, password) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const want = password === undefined ? 1 : 2;
    let text = '';
    const done = (v) => { sock.destroy(); resolve(v); };
    sock.setTimeout(2000, () => done(null));
    sock.on('error', () => done(null));
    sock.on('connect', () => sock.write(
      (password === undefined ? '' : encode(['AUTH', password])) +
      encode(['INFO', 'server'])));
    sock.on('data', (d) => {
      text += d.toString('latin1');
      let pos = 0;
      let body = null;
      for (let i = 0; i < want; i++) {
        const eol = text.indexOf('\r\n', pos);
        if (eol < 0) return;
        const line = text.slice(pos, eol);
        if (line[0] === '$') {
          const n = Number(line.slice(1));
          if (text.length < eol + 2 + n + 2) return;
          body = text.slice(eol + 2, eol + 2 + n);
          pos = eol + 2 + n + 2;
        } else {
          body = line;
          pos = eol + 2;
        }
      }
      const m = /^process_id:(\d+)\r?$/m.exec(body);
      done(m ? Number(m[1]) : body);
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Starts the daemon and waits (bounded) until its port answers INFO server
// with the pid of the process started: a port taken meanwhile by another
// process (a parallel test's daemon) is detected and another port tried.
// Options: password; args, more daemon arguments (the TLS suite passes its
// tls-* directives); for the harness's own tests, pickPort, attempts and
// prefix (an argv that execs the binary, or stands in for it).
export async function startDaemon({ password, args: extra = [],
                                    pickPort = freePort, attempts = 5,
                                    prefix = [] } = {}) {
  const bin = binary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cuckood-node-'));
  let why = 'no attempt';
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = await pickPort();
    const args = ['--port', String(port), '--dir', dir,
                  '--bind', '127.0.0.1'];
    if (isRedis) args.push('--save', '', '--daemonize', 'no');
    if (password !== undefined) args.push('--requirepass', password);
    args.push(...extra);
    const logPath = path.join(dir, 'daemon.log');
    const logFd = openSync(logPath, 'w');
    const argv = [...prefix, bin, ...args];
    const proc = spawn(argv[0], argv.slice(1), { cwd: dir,
                                    stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    let exited = null;
    const exitP = new Promise((resolve) => proc.on('exit', (code, sig) => {
      exited = { code, sig };
      resolve(exited);
    }));
    const deadline = Date.now() + 30000;
    let pid = null;
    let last = null;
    while (Date.now() < deadline && exited === null) {
      last = await answeringPid(port, password);
      if (typeof last === 'number') { pid = last; break; }
      await sleep(50);
    }
    if (pid !== null && pid === proc.pid) {
      return {
        port, dir, proc, pid,
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
    if (pid !== null) {
      why = `port ${port} is answered by pid ${pid}, not by the daemon ` +
            `started (pid ${proc.pid})`;
    } else if (exited !== null) {
      why = `exited with ${JSON.stringify(exited)}`;
    } else {
      why = `port ${port} never answered INFO server (last: ${last})`;
    }
    if (exited === null) { proc.kill('SIGKILL'); await exitP; }
  }
  let log = '';
  try { log = readFileSync(path.join(dir, 'daemon.log'), 'utf8'); } catch {}
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`daemon did not start: ${bin}: ${why}\n${log}`);
}
