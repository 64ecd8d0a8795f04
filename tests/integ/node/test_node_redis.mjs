// node-redis (npm `redis`, with its bundled @redis/bloom) against cuckood,
// in RESP2, RESP3 and the library's default (RESP3: HELLO 3 on connect).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, RESP_TYPES } from 'redis';
import { startDaemon, skipCf, answeringPid } from './daemon.mjs';

const INFO_FIELDS = [
  'Size', 'Number of buckets', 'Number of filters',
  'Number of items inserted', 'Number of items deleted', 'Bucket size',
  'Expansion rate', 'Max iterations',
];

async function connect(port, opts = {}) {
  const client = createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: false },
    // node-redis gives up on a command after 5 s by default; a loaded
    // machine (sanitizer builds, parallel suites) can take longer for 20k
    // pipelined commands, and that is no failure of the server.
    commandOptions: { timeout: 60000 },
    ...opts,
  });
  client.on('error', () => {});
  await client.connect();
  return client;
}

let daemon;
before(async () => { daemon = await startDaemon(); });
after(async () => { await daemon.stop(); });

describe('the launcher', () => {
  test('the daemon answering is the one started', async () => {
    assert.equal(daemon.pid, daemon.proc.pid);
    assert.equal(await answeringPid(daemon.port), daemon.proc.pid);
  });

  test('another process on its port is detected', async () => {
    // A process that never listens, given the port of a daemon it did not
    // start: that port answers, with the wrong pid.
    await assert.rejects(
      startDaemon({ pickPort: async () => daemon.port, attempts: 1,
                    prefix: ['sh', '-c', 'exec sleep 60', 'sh'] }),
      new RegExp(`port ${daemon.port} is answered by pid ${daemon.pid},`));
    assert.equal(await answeringPid(daemon.port), daemon.pid);
  });
});

for (const RESP of [2, 3, undefined]) {
  const label = RESP === undefined ? 'default protocol' : `RESP${RESP}`;
  const opts = RESP === undefined ? {} : { RESP };
  // Replies that differ by protocol when sent raw with sendCommand.
  const bool = (b) => (RESP === 2 ? (b ? 1 : 0) : b);

  describe(`node-redis ${label}`, () => {
    let client;
    const k = (name) => `${label}:${name}`;

    before(async () => { client = await connect(daemon.port, opts); });
    after(async () => { await client.quit(); });

    test('ping, echo, info', async () => {
      assert.equal(await client.ping(), 'PONG');
      assert.equal(await client.echo('hi'), 'hi');
      const info = await client.info();
      assert.match(info, /redis_version:/);
      assert.match(info, /loading:0/);
    });

    test('unknown command is a rejected promise', async () => {
      await assert.rejects(client.sendCommand(['NOSUCHCMD', 'a', 'b']),
        (e) => e.message ===
          "ERR unknown command 'NOSUCHCMD', with args beginning with: " +
          "'a' 'b' ");
      assert.equal(await client.ping(), 'PONG');
    });

    test('CF via sendCommand', { skip: skipCf }, async () => {
      const f = k('raw');
      assert.equal(await client.sendCommand(['CF.RESERVE', f, '1000']), 'OK');
      assert.equal(await client.sendCommand(['CF.ADD', f, 'a']), bool(true));
      assert.equal(await client.sendCommand(['CF.EXISTS', f, 'a']),
        bool(true));
      assert.equal(await client.sendCommand(['CF.EXISTS', f, 'nope']),
        bool(false));
      assert.deepEqual(await client.sendCommand(['CF.MEXISTS', f, 'a',
        'nope']), [bool(true), bool(false)]);
      assert.equal(await client.sendCommand(['CF.COUNT', f, 'a']), 1);
      const info = await client.sendCommand(['CF.INFO', f]);
      if (RESP === 2) {
        assert.deepEqual(info.filter((_, i) => i % 2 === 0).slice(0, 8),
          INFO_FIELDS);
      } else {
        assert.deepEqual(Object.keys(info).slice(0, 8), INFO_FIELDS);
      }
      await assert.rejects(client.sendCommand(['CF.INFO', k('missing')]),
        /not found/i);
      await assert.rejects(client.sendCommand(['CF.RESERVE', f, '1000']),
        /exists/i);
    });

    test('CF via the bloom module (client.cf)', { skip: skipCf }, async () => {
      const f = k('mod');
      assert.equal(await client.cf.reserve(f, 1000,
        { BUCKETSIZE: 4, MAXITERATIONS: 20, EXPANSION: 2 }), 'OK');
      assert.equal(await client.cf.add(f, 'a'), true);
      assert.equal(await client.cf.addNX(f, 'a'), false);
      assert.equal(await client.cf.addNX(f, 'b'), true);
      assert.deepEqual(await client.cf.insert(f, ['c', 'd']), [true, true]);
      assert.deepEqual(await client.cf.insertNX(f, ['d', 'e']), [0, 1]);
      assert.equal(await client.cf.exists(f, 'c'), true);
      assert.equal(await client.cf.exists(f, 'nope'), false);
      assert.deepEqual(await client.cf.mExists(f, ['a', 'nope', 'e']),
        [true, false, true]);
      assert.equal(await client.cf.count(f, 'a'), 1);
      assert.equal(await client.cf.del(f, 'a'), true);
      assert.equal(await client.cf.exists(f, 'a'), false);
      const info = await client.cf.info(f);
      assert.equal(info['Number of filters'], 1);
      assert.equal(info['Number of items inserted'], 4);
      assert.equal(info['Number of items deleted'], 1);
      assert.equal(info['Bucket size'], 4);
      assert.equal(info['Expansion rate'], 2);
      assert.equal(info['Max iterations'], 20);
      assert.ok(info['Size'] > 0);
      assert.ok(info['Number of buckets'] >= 250);
      // Auto-create with CAPACITY; NOCREATE on a missing key is an error.
      assert.deepEqual(await client.cf.insert(k('auto'), ['x'],
        { CAPACITY: 5000 }), [true]);
      assert.equal(await client.type(k('auto')), 'MBbloomCF');
      await assert.rejects(client.cf.insert(k('nocreate'), ['x'],
        { NOCREATE: true }));
      assert.equal(await client.exists(k('nocreate')), 0);
    });

    test('SCANDUMP / LOADCHUNK round trip', { skip: skipCf }, async () => {
      const bin = client.withTypeMapping({
        [RESP_TYPES.BLOB_STRING]: Buffer,
      });
      const src = k('dump-src');
      const dst = k('dump-dst');
      await client.cf.reserve(src, 10000);
      const items = Array.from({ length: 5000 }, (_, i) => `it${i}`);
      const added = await client.cf.insert(src, items);
      assert.ok(added.every((x) => x === true));
      const chunks = [];
      let iterator = 0;
      for (;;) {
        const r = await bin.cf.scanDump(src, iterator);
        iterator = r.iterator;
        if (iterator === 0) break;
        assert.ok(Buffer.isBuffer(r.chunk));
        chunks.push([iterator, r.chunk]);
        assert.ok(chunks.length < 10000);
      }
      assert.ok(chunks.length > 0);
      for (const [it, chunk] of chunks) {
        assert.equal(await client.cf.loadChunk(dst, it, chunk), 'OK');
      }
      const found = await client.cf.mExists(dst, items);
      assert.ok(found.every((x) => x === true));
      assert.deepEqual(await client.cf.info(dst), await client.cf.info(src));
    });

    test('10k pipelined commands', { skip: skipCf }, async () => {
      const f = k('pipe');
      const multi = client.multi();
      for (let i = 0; i < 10000; i++) multi.cf.add(f, `p${i}`);
      const res = await multi.execAsPipeline();
      assert.equal(res.length, 10000);
      assert.ok(res.every((x) => x === true));
      // Implicit pipelining: many commands in flight at once.
      const all = await Promise.all(Array.from({ length: 10000 },
        (_, i) => client.cf.exists(f, `p${i}`)));
      assert.ok(all.every((x) => x === true));
      assert.equal((await client.cf.info(f))['Number of items inserted'],
        10000);
    });

    test('binary-safe keys and items', { skip: skipCf }, async () => {
      const key = Buffer.from(`${label}\x00\r\nbin\xff`, 'latin1');
      const items = [Buffer.from([0]), Buffer.from('\r\n'),
        Buffer.from([0xff, 0, 0xfe]), Buffer.alloc(0)];
      for (const it of items) {
        assert.equal(await client.sendCommand(['CF.ADD', key, it]),
          bool(true));
      }
      assert.deepEqual(await client.sendCommand(['CF.MEXISTS', key,
        ...items]), items.map(() => bool(true)));
      const bin = client.withTypeMapping({
        [RESP_TYPES.BLOB_STRING]: Buffer,
      });
      const keys = await bin.keys(Buffer.from(`${label}\x00*`, 'latin1'));
      assert.equal(keys.length, 1);
      assert.ok(keys[0].equals(key));
    });

    test('database selection', { skip: skipCf }, async () => {
      const c3 = await connect(daemon.port, { ...opts, database: 3 });
      const f = k('db');
      assert.equal(await c3.cf.add(f, 'x'), true);
      assert.equal(await c3.cf.exists(f, 'x'), true);
      assert.equal(await client.cf.exists(f, 'x'), false);
      assert.equal(await c3.exists(f), 1);
      assert.equal(await client.exists(f), 0);
      await c3.quit();
    });

    test('multi() runs as one transaction', { skip: skipCf }, async () => {
      const f = k('multi');
      const res = await client.multi()
        .cf.add(f, 'a')
        .cf.exists(f, 'a')
        .cf.exists(f, 'b')
        .exists(f)
        .exec();
      assert.deepEqual(res, [true, true, false, 1]);
      // A run-time error is a reply in place; the rest still runs.
      const mixed = client.multi()
        .addCommand(['CF.DEL', k('missing'), 'x'])
        .cf.exists(f, 'a');
      await assert.rejects(mixed.exec(), (e) => {
        assert.ok(e.replies !== undefined || /not found/i.test(e.message));
        return true;
      });
      // A command refused when queued aborts the whole transaction.
      await assert.rejects(
        client.multi().addCommand(['CF.ADD', f]).cf.add(f, 'q').exec(),
        /EXECABORT|wrong number/);
      assert.equal(await client.cf.exists(f, 'q'), false);
    });

    test('watch: another client\'s write aborts exec', { skip: skipCf },
      async () => {
        const f = k('watched');
        await client.cf.add(f, 'a');
        const other = await connect(daemon.port, opts);
        await client.watch(f);
        await other.cf.add(f, 'b');
        await assert.rejects(client.multi().cf.add(f, 'c').exec(),
          (e) => e.constructor.name === 'WatchError');
        assert.equal(await client.cf.exists(f, 'c'), false);
        // Watched again and left alone: it runs.
        await client.watch(f);
        await other.cf.exists(f, 'b');
        assert.deepEqual(await client.multi().cf.add(f, 'c').exec(), [true]);
        await other.quit();
      });

    test('client name', async () => {
      const c = await connect(daemon.port, { ...opts, name: 'node-integ' });
      assert.equal(await c.clientGetName(), 'node-integ');
      await c.quit();
    });
  });
}

describe('node-redis with a password', () => {
  let d;
  before(async () => { d = await startDaemon({ password: 'node-pw' }); });
  after(async () => { await d.stop(); });

  for (const RESP of [2, 3]) {
    test(`RESP${RESP}: auth on connect`, async () => {
      const c = await connect(d.port, { RESP, password: 'node-pw',
                                        database: 2 });
      assert.equal(await c.ping(), 'PONG');
      if (!skipCf) {
        assert.equal(await c.cf.add('authed', 'x'), true);
        assert.equal(await c.cf.exists('authed', 'x'), true);
      }
      await c.quit();
    });

    test(`RESP${RESP}: wrong password fails to connect`, async () => {
      const c = createClient({
        socket: { host: '127.0.0.1', port: d.port,
                  reconnectStrategy: false },
        RESP, password: 'wrong',
      });
      c.on('error', () => {});
      await assert.rejects(c.connect(), /WRONGPASS/);
      if (c.isOpen) c.destroy();
    });
  }

  test('no password: NOAUTH', async () => {
    const c = createClient({
      socket: { host: '127.0.0.1', port: d.port, reconnectStrategy: false },
      RESP: 2,
    });
    c.on('error', () => {});
    await c.connect();
    await assert.rejects(c.ping(), /NOAUTH/);
    c.destroy();
  });
});

describe('node-redis with an ACL user in the URL', () => {
  let d;
  let admin;
  before(async () => {
    d = await startDaemon();
    admin = await connect(d.port, { RESP: 2 });
    assert.equal(await admin.sendCommand(
      ['ACL', 'SETUSER', 'app', 'on', '>app-pw', '~seen:*', '+@read']), 'OK');
    assert.equal(await admin.sendCommand(
      ['ACL', 'SETUSER', 'loader', 'on', '>load-pw', '~*', '+@all']), 'OK');
  });
  after(async () => { await admin.quit(); await d.stop(); });

  for (const RESP of [2, 3]) {
    test(`RESP${RESP}: the loader writes, the app only reads`, async () => {
      const loader = createClient({
        url: `redis://loader:load-pw@127.0.0.1:${d.port}`, RESP,
        socket: { reconnectStrategy: false },
      });
      loader.on('error', () => {});
      await loader.connect();
      assert.equal(await loader.sendCommand(['ACL', 'WHOAMI']), 'loader');
      const app = createClient({
        url: `redis://app:app-pw@127.0.0.1:${d.port}`, RESP,
        socket: { reconnectStrategy: false },
      });
      app.on('error', () => {});
      await app.connect();
      if (!skipCf) {
        await loader.sendCommand(['CF.ADD', `seen:${RESP}`, 'x']);
        assert.equal(await app.sendCommand(['CF.EXISTS', `seen:${RESP}`, 'x']),
                     RESP === 3 ? true : 1);
        await assert.rejects(app.sendCommand(['CF.ADD', `seen:${RESP}`, 'y']),
                             /NOPERM/);
        await assert.rejects(app.sendCommand(['CF.EXISTS', 'other', 'y']),
                             /NOPERM/);
      }
      await assert.rejects(app.sendCommand(['FLUSHALL']), /NOPERM/);
      await app.quit();
      await loader.quit();
    });

    test(`RESP${RESP}: a wrong password in the URL fails`, async () => {
      const c = createClient({
        url: `redis://app:wrong@127.0.0.1:${d.port}`, RESP,
        socket: { reconnectStrategy: false },
      });
      c.on('error', () => {});
      await assert.rejects(c.connect(), /WRONGPASS/);
      if (c.isOpen) c.destroy();
    });
  }
});
