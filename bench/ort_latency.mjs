#!/usr/bin/env node
// ONNX Runtime latency of exported models, for bench/run.sh.
//
//   node bench/ort_latency.mjs MODEL.onnx [MODEL2.onnx ...] --inputs DIR [--runs 20]
//        [--warmup 2] [--max-seconds 120] [--threads 0]
//
// Loads each model by path (so external data files beside it are found), feeds DIR/input_<i>.pb
// to its i-th input, runs each --warmup times untimed, then times --runs rounds in which every
// model runs once, in turn (A B A B ...: load from other processes hits all models alike). Stops
// early when the rounds pass --max-seconds, after at least 3. Prints one JSON line:
// {"models": [{"model", "median_ms", "min_ms", "max_ms", "runs", "load_seconds"}, ...],
//  "threads"}. --threads 0 (the default) lets ONNX Runtime use one intra-op thread per core.
// Uses onnxruntime-node from tools/verify/node_modules (npm ci there first).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'tools', 'verify', 'package.json'));
const ort = require('onnxruntime-node');

function usage(msg) {
  if (msg) process.stderr.write(`ort_latency: ${msg}\n`);
  process.stderr.write('usage: node bench/ort_latency.mjs MODEL.onnx [MODEL2.onnx ...] ' +
    '--inputs DIR [--runs 20] [--warmup 2] [--max-seconds 120] [--threads 0]\n');
  process.exit(2);
}

// The TensorProto fields the bench's inputs use: 1 dims, 2 data_type, 9 raw_data.
function readTensorProto(file) {
  const buf = fs.readFileSync(file);
  let pos = 0;
  const varint = () => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[pos++];
      value |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return value;
      shift += 7n;
    }
  };
  const dims = [];
  let type = null;
  let raw = null;
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    if (wire === 0) {
      const v = varint();
      if (field === 1) dims.push(Number(v));
      else if (field === 2) type = Number(v);
    } else if (wire === 2) {
      const n = Number(varint());
      const end = pos + n;
      if (field === 1) {
        while (pos < end) dims.push(Number(varint()));
      } else if (field === 9) {
        raw = buf.subarray(pos, end);
      }
      pos = end;
    } else {
      throw new Error(`${file}: unexpected wire type ${wire}`);
    }
  }
  const types = { 1: ['float32', Float32Array], 7: ['int64', BigInt64Array] };
  if (!(type in types) || raw === null) {
    throw new Error(`${file}: not a float32/int64 TensorProto with raw_data`);
  }
  const [name, Array] = types[type];
  const copy = new Uint8Array(raw.length);  // aligned
  copy.set(raw);
  return new ort.Tensor(name, new Array(copy.buffer), dims);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const argv = process.argv.slice(2);
  const models = [];
  let dir = null;
  const opts = { runs: 20, warmup: 2, 'max-seconds': 120, threads: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--inputs') {
      dir = argv[++i];
    } else if (a.startsWith('--')) {
      const k = a.slice(2);
      if (!(k in opts)) usage(`unknown option ${a}`);
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) usage(`${a} needs a number`);
      opts[k] = v;
    } else {
      models.push(a);
    }
  }
  if (!models.length || !dir) usage();

  const inputs = [];
  for (let i = 0; fs.existsSync(path.join(dir, `input_${i}.pb`)); i++) {
    inputs.push(readTensorProto(path.join(dir, `input_${i}.pb`)));
  }
  if (!inputs.length) usage(`${dir} holds no input_0.pb`);

  const sessionOptions = { graphOptimizationLevel: 'all', logSeverityLevel: 3 };
  if (opts.threads > 0) sessionOptions.intraOpNumThreads = opts.threads;
  const entries = [];
  for (const model of models) {
    const t0 = performance.now();
    const session = await ort.InferenceSession.create(model, sessionOptions);
    const loadSeconds = (performance.now() - t0) / 1000;
    if (session.inputNames.length !== inputs.length) {
      throw new Error(`${model} has ${session.inputNames.length} inputs, ${dir} ${inputs.length}`);
    }
    const feeds = {};
    session.inputNames.forEach((name, i) => { feeds[name] = inputs[i]; });
    for (let i = 0; i < opts.warmup; i++) await session.run(feeds);
    entries.push({ model, session, feeds, loadSeconds, times: [] });
  }

  const start = performance.now();
  for (let round = 0; round < opts.runs; round++) {
    for (const e of entries) {
      const t = performance.now();
      await e.session.run(e.feeds);
      e.times.push(performance.now() - t);
    }
    if (round + 1 >= 3 && performance.now() - start > opts['max-seconds'] * 1000) break;
  }
  const out = [];
  for (const e of entries) {
    await e.session.release();
    out.push({
      model: e.model,
      median_ms: median(e.times),
      min_ms: Math.min(...e.times),
      max_ms: Math.max(...e.times),
      runs: e.times.length,
      load_seconds: e.loadSeconds,
    });
  }
  process.stdout.write(JSON.stringify({ models: out, threads: opts.threads }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`ort_latency: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
