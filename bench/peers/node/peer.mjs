// peer.mjs serves one peer index to bench/peers (see ../README.md): it
// builds the index over the vector file, says "ready" with the build time,
// then answers each "run" line on stdin by searching the 200 queries once,
// one at a time, and printing their latencies and result ids as one JSON
// line. Each tool runs in its own process, so the driver can interleave
// rounds across tools.
//
//	node peer.mjs TOOL VECTORS QUERIES DIM K
//
// TOOL is hnswlib, usearch-hnsw, usearch-exact or lancedb. The files are
// little-endian float32, row after row.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const [tool, vecPath, qPath, dimS, kS] = process.argv.slice(2);
const dim = Number(dimS);
const k = Number(kS);

function readF32(p) {
  const b = fs.readFileSync(p);
  return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
}
const data = readF32(vecPath);
const queries = readF32(qPath);
const n = data.length / dim;
const nq = queries.length / dim;
const row = (a, i) => a.subarray(i * dim, (i + 1) * dim);

// Each builder returns an async search(q) → array of row numbers.
async function build() {
  switch (tool) {
    case 'hnswlib': {
      const { default: hnswlib } = await import('hnswlib-node');
      const idx = new hnswlib.HierarchicalNSW('cosine', dim);
      idx.initIndex(n, 16, 200, 100);
      // hnswlib-node takes plain arrays.
      for (let i = 0; i < n; i++) idx.addPoint(Array.from(row(data, i)), i);
      idx.setEf(64);
      return async (q) => idx.searchKnn(Array.from(q), k).neighbors;
    }
    case 'usearch-hnsw': {
      const usearch = await import('usearch');
      const idx = new usearch.Index({ dimensions: dim, metric: 'cos', quantization: 'f32', connectivity: 16, expansion_add: 128, expansion_search: 64 });
      const keys = new BigUint64Array(n);
      for (let i = 0; i < n; i++) keys[i] = BigInt(i);
      idx.add(keys, data, 0);
      return async (q) => Array.from(idx.search(q, k, 1).keys, Number);
    }
    case 'usearch-exact': {
      // usearch's brute force over int8 codes (its exact path).
      const usearch = await import('usearch');
      const codes = toI8(data);
      return async (q) => Array.from(usearch.exactSearch(codes, toI8(q), dim, k, 'cos', 1).keys, Number);
    }
    case 'lancedb': {
      const lancedb = await import('@lancedb/lancedb');
      const arrow = await import('apache-arrow');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'peers-lancedb-'));
      process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
      const db = await lancedb.connect(dir);
      const rows = new Array(n);
      for (let i = 0; i < n; i++) rows[i] = { id: i, vector: Array.from(row(data, i)) };
      const schema = new arrow.Schema([
        new arrow.Field('id', new arrow.Int32(), false),
        new arrow.Field('vector', new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true)), false),
      ]);
      const table = await db.createTable('v', lancedb.makeArrowTable(rows, { schema }));
      const partitions = Math.max(1, Math.round(Math.sqrt(n)));
      await table.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: partitions, numSubVectors: dim / 8, distanceType: 'cosine' }) });
      return async (q) => {
        const r = await table.vectorSearch(q).distanceType('cosine').limit(k).nprobes(20).select(['id', '_distance']).toArray();
        return r.map((x) => x.id);
      };
    }
  }
  throw new Error(`unknown tool ${tool}`);
}

function toI8(a) {
  // Per-vector scale to [-127, 127], as usearch's own i8 conversion.
  const out = new Int8Array(a.length);
  for (let i = 0; i < a.length; i += dim) {
    let m = 0;
    for (let j = 0; j < dim; j++) m = Math.max(m, Math.abs(a[i + j]));
    const s = m > 0 ? 127 / m : 0;
    for (let j = 0; j < dim; j++) out[i + j] = Math.round(a[i + j] * s);
  }
  return out;
}

const t0 = process.hrtime.bigint();
const search = await build();
const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;
const rssMiB = process.memoryUsage().rss / 1048576;
process.stdout.write(JSON.stringify({ ready: true, build_ms: buildMs, rss_mib: rssMiB }) + '\n');

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (line.trim() !== 'run') break;
  const lat = new Array(nq);
  const ids = new Array(nq);
  for (let i = 0; i < nq; i++) {
    const q = row(queries, i);
    const s = process.hrtime.bigint();
    const r = await search(q);
    lat[i] = Number(process.hrtime.bigint() - s);
    ids[i] = Array.from(r, Number);
  }
  process.stdout.write(JSON.stringify({ lat_ns: lat, ids }) + '\n');
}
process.exit(0);
