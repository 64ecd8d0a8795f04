// ioredis against cuckood: connect with its INFO ready check, call() for the
// CF commands, pipelines, database selection, authentication; in RESP2 and
// RESP3 (ioredis's default: HELLO 3 with RESP2-shaped replies).

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { startDaemon, skipCf } from './daemon.mjs';

const INFO_FIELDS = [
  'Size', 'Number of buckets', 'Number of filters',
  'Number of items inserted', 'Number of items deleted', 'Bucket size',
  'Expansion rate', 'Max iterations',
];

async function connect(port, opts = {}) {
  const r = new Redis({
    host: '127.0.0.1', port, lazyConnect: true, enableReadyCheck: true,
    maxRetriesPerRequest: 0, retryStrategy: () => null, ...opts,
  });
  r.on('error', () => {});
  await r.connect();
  return r;
}

let daemon;
before(async () => { daemon = await startDaemon(); });
after(async () => { await daemon.stop(); });

for (const protocol of [2, 3, undefined]) {
  const label = protocol === undefined ? 'default protocol'
                                       : `protocol ${protocol}`;
  const opts = protocol === undefined ? {} : { protocol };

  describe(`ioredis ${label}`, () => {
    let r;
    const k = (name) => `io ${label}:${name}`;

    before(async () => { r = await connect(daemon.port, opts); });
    after(async () => { await r.quit(); });

    test('ready check passed, ping, echo', async () => {
      assert.equal(r.status, 'ready');
      assert.equal(await r.ping(), 'PONG');
      assert.equal(await r.echo('hi'), 'hi');
      const info = await r.info('server');
      assert.match(info, /redis_version:/);
    });

    test('unknown command', async () => {
      await assert.rejects(r.call('NOSUCHCMD', 'a', 'b'),
        (e) => e.message ===
          "ERR unknown command 'NOSUCHCMD', with args beginning with: " +
          "'a' 'b' ");
      assert.equal(await r.ping(), 'PONG');
    });

    test('CF commands via call()', { skip: skipCf }, async () => {
      const f = k('cf');
      assert.equal(await r.call('CF.RESERVE', f, 1000, 'BUCKETSIZE', 4,
        'EXPANSION', 2, 'MAXITERATIONS', 20), 'OK');
      assert.equal(await r.call('CF.ADD', f, 'a'), 1);
      assert.equal(await r.call('CF.ADDNX', f, 'a'), 0);
      assert.equal(await r.call('CF.EXISTS', f, 'a'), 1);
      assert.equal(await r.call('CF.EXISTS', f, 'nope'), 0);
      assert.deepEqual(await r.call('CF.MEXISTS', f, 'a', 'nope'), [1, 0]);
      assert.deepEqual(await r.call('CF.INSERT', f, 'ITEMS', 'b', 'c'),
        [1, 1]);
      assert.deepEqual(await r.call('CF.INSERTNX', f, 'ITEMS', 'c', 'd'),
        [0, 1]);
      assert.equal(await r.call('CF.COUNT', f, 'b'), 1);
      assert.equal(await r.call('CF.DEL', f, 'b'), 1);
      const info = await r.call('CF.INFO', f);
      assert.ok(Array.isArray(info));
      assert.deepEqual(info.filter((_, i) => i % 2 === 0).slice(0, 8),
        INFO_FIELDS);
      const m = Object.fromEntries(
        Array.from({ length: info.length / 2 },
          (_, i) => [info[2 * i], info[2 * i + 1]]));
      assert.equal(m['Number of items inserted'], 3);
      assert.equal(m['Number of items deleted'], 1);
      assert.equal(m['Bucket size'], 4);
      assert.equal(m['Expansion rate'], 2);
      assert.equal(m['Max iterations'], 20);
      assert.equal(await r.type(f), 'MBbloomCF');
      await assert.rejects(r.call('CF.INFO', k('missing')), /not found/i);
      await assert.rejects(r.call('CF.DEL', k('missing'), 'x'),
        /not found/i);
    });

    test('10k-command pipeline', { skip: skipCf }, async () => {
      const f = k('pipe');
      let p = r.pipeline();
      for (let i = 0; i < 10000; i++) p.call('CF.ADD', f, `p${i}`);
      let res = await p.exec();
      assert.equal(res.length, 10000);
      assert.ok(res.every(([err, v]) => err === null && v === 1));
      p = r.pipeline();
      for (let i = 0; i < 10000; i++) p.call('CF.EXISTS', f, `p${i}`);
      p.call('CF.INFO', k('missing'));
      res = await p.exec();
      assert.ok(res.slice(0, 10000).every(([e, v]) => e === null && v === 1));
      assert.match(res[10000][0].message, /not found/i);
    });

    test('100k items in one CF.INSERT', { skip: skipCf }, async () => {
      const f = k('big');
      const items = Array.from({ length: 100000 }, (_, i) => `b${i}`);
      const res = await r.call('CF.INSERT', f, 'CAPACITY', 200000,
        'ITEMS', ...items);
      assert.equal(res.length, 100000);
      assert.ok(res.every((x) => x === 1));
      const ex = await r.call('CF.MEXISTS', f, ...items);
      assert.ok(ex.every((x) => x === 1));
    });

    test('binary keys and items (callBuffer)', { skip: skipCf }, async () => {
      const key = Buffer.from([0x6b, 0, 0x0d, 0x0a, 0xff]);
      const item = Buffer.from([0, 1, 2, 0x0d, 0x0a]);
      assert.equal(await r.call('CF.ADD', key, item), 1);
      assert.equal(await r.call('CF.EXISTS', key, item), 1);
      assert.equal(await r.call('CF.EXISTS', key, Buffer.from([0, 1, 2])),
        0);
      const keys = await r.keysBuffer(Buffer.from([0x6b, 0, 0x2a]));
      assert.equal(keys.length, 1);
      assert.ok(keys[0].equals(key));
    });

    test('db option selects the database', { skip: skipCf }, async () => {
      const r3 = await connect(daemon.port, { ...opts, db: 3 });
      const f = k('db');
      assert.equal(await r3.call('CF.ADD', f, 'x'), 1);
      assert.equal(await r3.call('CF.EXISTS', f, 'x'), 1);
      assert.equal(await r.call('CF.EXISTS', f, 'x'), 0);
      assert.equal(await r3.dbsize() >= 1, true);
      await r3.quit();
    });

    test('multi() runs as one transaction', { skip: skipCf }, async () => {
      const f = k('multi');
      const res = await r.multi()
        .call('CF.ADD', f, 'a')
        .call('CF.EXISTS', f, 'a')
        .call('CF.DEL', k('missing'), 'x')
        .exists(f)
        .exec();
      assert.equal(res.length, 4);
      assert.deepEqual(res[0], [null, 1]);
      assert.deepEqual(res[1], [null, 1]);
      assert.match(res[2][0].message, /not found/i);
      assert.deepEqual(res[3], [null, 1]);
      // A command refused when queued aborts the whole transaction.
      await assert.rejects(
        r.multi().call('CF.ADD', f).call('CF.ADD', f, 'q').exec(),
        /EXECABORT/);
      assert.equal(await r.call('CF.EXISTS', f, 'q'), 0);
    });

    test('watch: another client\'s write makes exec null', { skip: skipCf },
      async () => {
        const f = k('watched');
        await r.call('CF.ADD', f, 'a');
        const other = await connect(r.options.port, opts);
        assert.equal(await r.watch(f), 'OK');
        await other.call('CF.ADD', f, 'b');
        assert.equal(await r.multi().call('CF.ADD', f, 'c').exec(), null);
        assert.equal(await r.call('CF.EXISTS', f, 'c'), 0);
        assert.equal(await r.watch(f), 'OK');
        assert.deepEqual(await r.multi().call('CF.ADD', f, 'c').exec(),
          [[null, 1]]);
        await other.quit();
      });

    test('connectionName', async () => {
      const c = await connect(daemon.port, { ...opts,
                                             connectionName: 'io-integ' });
      assert.equal(await c.client('GETNAME'), 'io-integ');
      await c.quit();
    });
  });
}

describe('ioredis with a password', () => {
  let d;
  before(async () => { d = await startDaemon({ password: 'io-pw' }); });
  after(async () => { await d.stop(); });

  for (const protocol of [2, 3]) {
    test(`protocol ${protocol}: password and db`, async () => {
      const c = await connect(d.port, { protocol, password: 'io-pw',
                                        db: 4 });
      assert.equal(c.status, 'ready');
      assert.equal(await c.ping(), 'PONG');
      if (!skipCf) {
        assert.equal(await c.call('CF.ADD', 'authed', 'x'), 1);
      }
      await c.quit();
    });

    test(`protocol ${protocol}: wrong password is rejected`, async () => {
      const c = new Redis({ host: '127.0.0.1', port: d.port,
                            lazyConnect: true, protocol, password: 'bad',
                            maxRetriesPerRequest: 0,
                            retryStrategy: () => null });
      const seen = [];
      c.on('error', (e) => seen.push(e.message));
      await assert.rejects(c.connect());
      c.disconnect();
      assert.ok(seen.some((m) => /WRONGPASS/.test(m)), seen.join('; '));
    });
  }
});

test('SIGTERM stops the daemon with status 0', async () => {
  const d = await startDaemon();
  const c = await connect(d.port);
  assert.equal(await c.ping(), 'PONG');
  await c.quit();
  const { code, sig } = await d.stop();
  assert.equal(sig, null);
  assert.equal(code, 0);
});

describe('ioredis with an ACL user in the URL', () => {
  let d;
  let admin;
  before(async () => {
    d = await startDaemon();
    admin = await connect(d.port);
    // ioredis's ready check runs INFO: the application user may run it.
    assert.equal(await admin.call('ACL', 'SETUSER', 'app', 'on', '>app-pw',
                                  '~seen:*', '+@read', '+info'), 'OK');
  });
  after(async () => { await admin.quit(); await d.stop(); });

  for (const protocol of [2, 3]) {
    test(`protocol ${protocol}: user and password from the URL`, async () => {
      const app = new Redis(`redis://app:app-pw@127.0.0.1:${d.port}`, {
        lazyConnect: true, protocol, maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      app.on('error', () => {});
      await app.connect();
      assert.equal(await app.call('ACL', 'WHOAMI').catch((e) => e.message),
                   "NOPERM this user has no permissions to run the " +
                   "'acl|whoami' command");
      if (!skipCf) {
        await admin.call('CF.ADD', `seen:io${protocol}`, 'x');
        assert.equal(await app.call('CF.EXISTS', `seen:io${protocol}`, 'x'), 1);
        await assert.rejects(app.call('CF.ADD', `seen:io${protocol}`, 'y'),
                             /NOPERM/);
      }
      await assert.rejects(app.call('DEL', 'seen:x'), /NOPERM/);
      await app.quit();
    });

    test(`protocol ${protocol}: wrong password rejected`, async () => {
      const c = new Redis(`redis://app:bad@127.0.0.1:${d.port}`, {
        lazyConnect: true, protocol, maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      const seen = [];
      c.on('error', (e) => seen.push(e.message));
      await assert.rejects(c.connect());
      c.disconnect();
      assert.ok(seen.some((m) => /WRONGPASS/.test(m)), seen.join('; '));
    });
  }
});
