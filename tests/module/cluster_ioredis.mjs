// ioredis Cluster against a Redis Cluster with the module: writes filters
// (half of them under one hash tag), reads every item back, prints a JSON
// summary. Usage: node cluster_ioredis.mjs <port> <prefix> <count> <items>
import { createRequire } from 'node:module';

const require = createRequire(
    new URL('../integ/node/package.json', import.meta.url));
const Redis = require('ioredis');

const [port, prefix, count, nitems] = process.argv.slice(2);
const cluster = new Redis.Cluster([{ host: '127.0.0.1', port: +port }],
                                  { scaleReads: 'master' });
const key = (i) => (i % 2 ? `{${prefix}tag}:${i}` : `${prefix}:${i}`);
const items = (i) => Array.from({ length: +nitems }, (_, j) => `${key(i)}:${j}`);
let found = 0, expected = 0;
try {
    for (let i = 0; i < +count; i += 100) {
        const batch = [];
        for (let k = i; k < Math.min(i + 100, +count); k++)
            batch.push(cluster.call('CF.INSERT', key(k), 'CAPACITY', 100,
                                    'ITEMS', ...items(k)));
        await Promise.all(batch);
    }
    for (let i = 0; i < +count; i++) {
        const r = await cluster.call('CF.MEXISTS', key(i), ...items(i));
        expected += r.length;
        found += r.filter((x) => x === 1).length;
    }
    console.log(JSON.stringify({ found, expected }));
} finally {
    cluster.disconnect();
}
