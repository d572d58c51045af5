#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime on an ONNX test-data folder and compares
// the outputs with the expected ones.
//
// CLI:    node tools/verify/verify.mjs MODEL.onnx DATA_DIR [--rtol 1e-3] [--atol 1e-5]
//         DATA_DIR holds input_0.pb, input_1.pb, ... and output_0.pb, ...
//         (serialized onnx.TensorProto). input_i feeds session.inputNames[i],
//         output_k is compared with session.outputNames[k].
//         Exit 0: all outputs match; 1: mismatch; 2: usage, file, load or run error.
// Server: node tools/verify/verify.mjs --serve
//         reads JSON lines {"model": "...", "data": "...", "rtol": 1e-3, "atol": 1e-5}
//         on stdin and answers each with one line {"ok": bool, "report": "..."}.
//         Exits at stdin EOF.
//
// Comparison: dims must be equal, element types equal. Floating-point values
// match when |a-b| <= atol + rtol*|b| (b = expected); NaN matches NaN, equal
// infinities match. Integer, bool and string values must be equal exactly.
// --atol-scale S (server: "atol_scale"): the atol of each floating-point output
// is at least S * its scale: max|expected|, capped at 10x the median of its
// nonzero |expected| values (so that a few extreme elements do not make the
// tolerance vacuous). The tolerance follows the output's scale (an output of
// O(1e-9) is not compared against atol 1e-5).
// --step Q (server: "step"; quantized outputs, Q = one quantization step): an
// element may also differ by up to one step, but at most --step-fraction F
// (default 0.02) of the elements may, and the mean |error| must stay under
// max(0.1, F) * Q. A zero-point off by one or floor instead of round moves (nearly)
// every element by one step and fails.
//
// Note [Quantized comparisons without VNNI]: ONNX Runtime's graph optimizations "extended" and
// "all" fuse DequantizeLinear → op → QuantizeLinear into QLinearConv / QLinearMatMul, whose u8s8
// kernels on an x86-64 CPU without VNNI (avx512_vnni / avx_vnni) use VPMADDUBSW, which saturates
// its 16-bit pair sums (ONNX Runtime's quantization docs say so); at "basic" the exported
// DequantizeLinear → Conv → QuantizeLinear runs as written, exactly. libtorch's engines differ the
// same way: QNNPACK computes exactly, oneDNN (libtorch's 3-D quantized convs) saturates there
// too. On an AMD EPYC without VNNI a per-tensor conv lands 2 steps off libtorch's QNNPACK result
// in 1-2% of its elements at "all", and on it exactly at "basic"; a oneDNN conv3d matches at
// "all" and is up to 5 steps off at "basic". So --exact-int8 (server "exact_int8": true) says the
// reference computes quantized ops exactly: on such a CPU, with --step, the outputs compared are
// those of a session at "basic", after the model loaded and ran at the default "all" (an error
// there fails the check as before). The report says which level its numbers come from.
//
// Server "quiet": true: ONNX Runtime logs nothing (a run expected to fail, whose error the report
// holds all the same).
//
// --detections (server: "detections": true): the outputs are detection records.
// N = dim 0 of the first expected output; every output whose dim 0 is N holds
// one row per detection (boxes Nx4 float, labels N int64, scores N float,
// masks Nx1xHxW, keypoints NxKx3, keypoints_scores NxK). Nearly equal scores
// may come out in another order, and a near-tie at the cut-off may swap the
// last detections: each expected detection, in order, is matched to the
// unused actual one with the same label and score and box within tolerance
// (the closest box when several), then the other per-detection outputs are
// compared row by row under that matching; a detection whose row is out of
// tolerance in one of them counts as unmatched. Passes when N is equal and at
// least 98% of the expected detections are matched (all of them when N < 50).
// Boxes and keypoints (NxKx3) are in pixels: --pixel-atol (default: --atol) is
// their absolute tolerance; scores and the other floating-point per-detection
// outputs have the atol above (--atol-scale included, as src/verify's). Other
// outputs compare as above.

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import * as ort from 'onnxruntime-node';

const DEFAULT_RTOL = 1e-3;
const DEFAULT_ATOL = 1e-5;
const DEFAULT_STEP_FRACTION = 0.02;

// Whether ONNX Runtime's fused u8s8 kernels may saturate on this CPU (Note [Quantized comparisons
// without VNNI]): x86-64 without avx512_vnni or avx_vnni.
const INT8_MAY_SATURATE = (() => {
  if (process.arch !== 'x64') return false;
  try {
    return !/\b(avx512_vnni|avx_vnni)\b/.test(fs.readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
})();

const USAGE = `usage: node verify.mjs MODEL.onnx DATA_DIR [--rtol ${DEFAULT_RTOL}] [--atol ${DEFAULT_ATOL}] [--atol-scale S]
         [--step Q [--step-fraction ${DEFAULT_STEP_FRACTION}] [--exact-int8]] [--detections [--pixel-atol A]]
       node verify.mjs --serve   (JSON lines {"model","data","rtol","atol","atol_scale","step",
                                  "step_fraction","exact_int8","detections","pixel_atol","quiet"} on stdin)`;

// ---------------------------------------------------------------------------
// onnx.TensorProto (the subset of onnx.proto that test data uses)
// ---------------------------------------------------------------------------

const TENSOR_PROTO_SCHEMA = `
syntax = "proto2";
package onnx;
message StringStringEntryProto {
  optional string key = 1;
  optional string value = 2;
}
message TensorProto {
  message Segment {
    optional int64 begin = 1;
    optional int64 end = 2;
  }
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  optional Segment segment = 3;
  repeated float float_data = 4 [packed = true];
  repeated int32 int32_data = 5 [packed = true];
  repeated bytes string_data = 6;
  repeated int64 int64_data = 7 [packed = true];
  optional string name = 8;
  optional bytes raw_data = 9;
  repeated double double_data = 10 [packed = true];
  repeated uint64 uint64_data = 11 [packed = true];
  optional string doc_string = 12;
  repeated StringStringEntryProto external_data = 13;
  optional int32 data_location = 14;
}
`;

const TensorProto = protobuf.parse(TENSOR_PROTO_SCHEMA).root.lookupType('onnx.TensorProto');

// The part of a model's graph that sequence outputs need (below): its outputs' kinds of type, and
// nodes and outputs to add. A serialized ModelProto followed by another merges with it: the graph
// (field 7), a singular message, merges, and its repeated nodes and outputs are appended to the
// model's own, which stay as they are.
const GRAPH_SCHEMA = TENSOR_PROTO_SCHEMA + `
message AttributeProto {
  optional string name = 1;
  optional TensorProto t = 5;
  optional int32 type = 20;
}
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  repeated AttributeProto attribute = 5;
}
message TypeProto {
  message Sequence {
    optional TypeProto elem_type = 1;
  }
  optional Sequence sequence_type = 4;
}
message ValueInfoProto {
  optional string name = 1;
  optional TypeProto type = 2;
}
message GraphProto {
  repeated NodeProto node = 1;
  repeated ValueInfoProto output = 12;
}
message ModelProto {
  optional GraphProto graph = 7;
}
`;
const GraphPart = protobuf.parse(GRAPH_SCHEMA).root.lookupType('onnx.ModelProto');

// ONNX data_type -> ORT tensor type, typed-array constructor, and the typed
// TensorProto field that holds the values when raw_data is absent.
const DTYPES = {
  1: { name: 'float32', array: Float32Array, field: 'floatData', float: true },
  2: { name: 'uint8', array: Uint8Array, field: 'int32Data' },
  3: { name: 'int8', array: Int8Array, field: 'int32Data' },
  4: { name: 'uint16', array: Uint16Array, field: 'int32Data' },
  5: { name: 'int16', array: Int16Array, field: 'int32Data' },
  6: { name: 'int32', array: Int32Array, field: 'int32Data' },
  7: { name: 'int64', array: BigInt64Array, field: 'int64Data' },
  8: { name: 'string', array: null, field: 'stringData' },
  9: { name: 'bool', array: Uint8Array, field: 'int32Data' },
  // FLOAT16 values are kept as their IEEE half bit patterns (int32_data holds the bits).
  10: { name: 'float16', array: Uint16Array, field: 'int32Data', float: true, half: true },
  11: { name: 'float64', array: Float64Array, field: 'doubleData', float: true },
  12: { name: 'uint32', array: Uint32Array, field: 'uint64Data' },
  13: { name: 'uint64', array: BigUint64Array, field: 'uint64Data' },
};
const DTYPE_BY_NAME = Object.fromEntries(Object.values(DTYPES).map((d) => [d.name, d]));

class UsageError extends Error {}

function toBigInt(v) {
  return typeof v === 'number' ? BigInt(v) : BigInt(v.toString()); // number or Long
}

function toNumber(v) {
  return typeof v === 'number' ? v : Number(v.toString());
}

/** Reads a serialized TensorProto file into {name, type, dims, data}. */
function readTensorProto(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${e.message}`);
  }
  let msg;
  try {
    msg = TensorProto.decode(bytes);
  } catch (e) {
    throw new UsageError(`${file} is not a valid onnx.TensorProto: ${e.message}`);
  }
  const where = path.basename(file);
  const dims = msg.dims.map(toNumber);
  for (const d of dims) {
    if (!Number.isSafeInteger(d) || d < 0) throw new UsageError(`${where}: bad dimension ${d}`);
  }
  const count = dims.reduce((a, b) => a * b, 1);
  const dt = DTYPES[msg.dataType];
  if (!dt) throw new UsageError(`${where}: unsupported TensorProto data_type ${msg.dataType}`);
  if (msg.dataLocation === 1 || (msg.externalData && msg.externalData.length)) {
    throw new UsageError(`${where}: tensors with external data are not supported`);
  }
  if (msg.segment) throw new UsageError(`${where}: segmented tensors are not supported`);

  let data;
  const hasRaw = msg.rawData && msg.rawData.length > 0;
  if (dt.name === 'string') {
    if (hasRaw) throw new UsageError(`${where}: string tensor with raw_data`);
    data = msg.stringData.map((b) => Buffer.from(b).toString('utf8'));
  } else if (hasRaw || (count > 0 && msg[dt.field].length === 0 && msg.rawData)) {
    const raw = msg.rawData;
    const expectBytes = count * dt.array.BYTES_PER_ELEMENT;
    if (raw.length !== expectBytes) {
      throw new UsageError(
        `${where}: raw_data has ${raw.length} bytes, expected ${expectBytes} for ${dt.name} ${fmtDims(dims)}`);
    }
    // Copy into a fresh, aligned buffer; then read little-endian via DataView
    // only if the host is big-endian (typed arrays use host order).
    const copy = new Uint8Array(raw); // copies
    if (!HOST_LITTLE_ENDIAN && dt.array.BYTES_PER_ELEMENT > 1) swapBytes(copy, dt.array.BYTES_PER_ELEMENT);
    data = new dt.array(copy.buffer, 0, count);
  } else {
    const src = msg[dt.field];
    if (src.length !== count) {
      throw new UsageError(
        `${where}: ${dt.field} has ${src.length} values, expected ${count} for ${dt.name} ${fmtDims(dims)}`);
    }
    data = new dt.array(count);
    const big = dt.array === BigInt64Array || dt.array === BigUint64Array;
    for (let i = 0; i < count; i++) data[i] = big ? toBigInt(src[i]) : toNumber(src[i]);
  }
  if (dt.name === 'bool') {
    for (let i = 0; i < data.length; i++) data[i] = data[i] ? 1 : 0;
  }
  return { name: msg.name || '', type: dt.name, dims, data };
}

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function swapBytes(u8, size) {
  for (let i = 0; i < u8.length; i += size) {
    for (let a = i, b = i + size - 1; a < b; a++, b--) {
      const t = u8[a]; u8[a] = u8[b]; u8[b] = t;
    }
  }
}

// ---------------------------------------------------------------------------
// Formatting and comparison helpers
// ---------------------------------------------------------------------------

function fmtDims(dims) {
  return `[${dims.join(',')}]`;
}

function fmtErr(x) {
  if (x === 0) return '0';
  if (!Number.isFinite(x)) return String(x);
  return x.toExponential(2);
}

function fmtValue(v) {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return JSON.stringify(v);
  if (Number.isInteger(v) || !Number.isFinite(v)) return String(v);
  return String(Number(v.toPrecision(9)));
}

function unravel(flat, dims) {
  const idx = new Array(dims.length);
  for (let i = dims.length - 1; i >= 0; i--) {
    const d = dims[i] || 1;
    idx[i] = flat % d;
    flat = Math.floor(flat / d);
  }
  return idx;
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Values of a tensor as an indexable array of numbers (floats) or raw values. */
function numericView(type, data) {
  if (type === 'float16') {
    if (data instanceof Uint16Array) return Array.from(data, halfToFloat);
    return Array.from(data, Number); // Float16Array where available
  }
  return data;
}

/**
 * The scale of an output, for --atol-scale: its largest finite |value|, but at most 10 times
 * the median of its finite nonzero |values|, so that a few extreme elements (1e30, 3.4e38 in an
 * edge-case test) do not make the tolerance of all the others vacuous.
 */
function outputScale(values) {
  const mags = [];
  let max = 0;
  for (let i = 0; i < values.length; i++) {
    const m = Math.abs(values[i]);
    if (!Number.isFinite(m) || m === 0) continue;
    mags.push(m);
    if (m > max) max = m;
  }
  if (mags.length === 0) return 0;
  const sorted = Float64Array.from(mags).sort();
  const median = sorted[Math.floor(sorted.length / 2)];
  return Math.min(max, 10 * median);
}

/**
 * Compares one expected tensor with ORT's output. Returns {ok, line}.
 */
export function compareOutput(k, name, expected, actual, rtol, atolFloor, opts = {}) {
  const { atolScale = 0, step = 0, stepFraction = DEFAULT_STEP_FRACTION } = opts;
  const head = `output ${k} '${name}':`;
  const aDims = Array.from(actual.dims, Number);
  if (actual.type !== expected.type) {
    return {
      ok: false,
      line: `${head} MISMATCH type: expected ${expected.type} ${fmtDims(expected.dims)}, ` +
        `got ${actual.type} ${fmtDims(aDims)}`,
    };
  }
  if (aDims.length !== expected.dims.length || aDims.some((d, i) => d !== expected.dims[i])) {
    return {
      ok: false,
      line: `${head} MISMATCH shape: expected ${fmtDims(expected.dims)}, got ${fmtDims(aDims)} ${actual.type}`,
    };
  }
  const desc = `shape ${fmtDims(aDims)} ${actual.type}`;
  const isFloat = DTYPE_BY_NAME[expected.type].float === true;
  const exp = numericView(expected.type, expected.data);
  const act = numericView(actual.type, actual.data);
  const n = exp.length;
  if (act.length !== n) {
    return { ok: false, line: `${head} MISMATCH ${desc}: ORT returned ${act.length} values, expected ${n}` };
  }

  let atol = atolFloor;
  let scale = 0;
  if (isFloat && atolScale > 0) {
    scale = outputScale(exp);
    atol = Math.max(atolFloor, atolScale * scale);
  }
  let maxAbs = 0;
  let sumAbs = 0;
  let bad = 0;
  let steps = 0; // elements off by more than the tolerance, but within one quantization step
  let worst = -1;
  let worstExcess = -Infinity;
  for (let i = 0; i < n; i++) {
    const b = exp[i];
    const a = act[i];
    if (isFloat) {
      if (Number.isNaN(b) || Number.isNaN(a)) {
        if (Number.isNaN(b) && Number.isNaN(a)) continue;
        bad++;
        if (worstExcess !== Infinity) { worstExcess = Infinity; worst = i; }
        continue;
      }
      if (a === b) continue; // covers equal infinities
      const err = Math.abs(a - b);
      if (!Number.isFinite(err)) {
        bad++;
        if (worstExcess !== Infinity) { worstExcess = Infinity; worst = i; }
        continue;
      }
      if (err > maxAbs) maxAbs = err;
      sumAbs += err;
      const excess = err - (atol + rtol * Math.abs(b));
      if (excess > 0 && step > 0 && err <= step * 1.0001) {
        steps++;
      } else if (excess > 0) {
        bad++;
        if (excess > worstExcess) { worstExcess = excess; worst = i; }
      }
    } else {
      if (a === b) continue;
      bad++;
      if (typeof a === 'string' || typeof b === 'string') {
        if (worst < 0) worst = i;
        continue;
      }
      const err = typeof a === 'bigint' ? Math.abs(Number(a - b)) : Math.abs(a - b);
      if (err > maxAbs) maxAbs = err;
      if (err > worstExcess) { worstExcess = err; worst = i; }
    }
  }
  const scaleNote = isFloat && atolScale > 0 ? ` atol=${fmtErr(atol)} (scale=${fmtErr(scale)})` : '';
  let stepNote = '';
  let stepsOk = true;
  if (isFloat && step > 0) {
    const meanAbs = n ? sumAbs / n : 0;
    const meanLimit = Math.max(0.1, stepFraction) * step;
    stepsOk = steps <= stepFraction * n && meanAbs <= meanLimit;
    stepNote = ` one-step=${steps}/${n} (at most ${stepFraction}) mean_abs_err=${fmtErr(meanAbs)} ` +
      `(at most ${fmtErr(meanLimit)})`;
  }
  if (bad === 0 && stepsOk) {
    return { ok: true, line: `${head} OK ${desc} max_abs_err=${fmtErr(maxAbs)}${scaleNote}${stepNote}` };
  }
  if (bad === 0) {
    return { ok: false, line: `${head} MISMATCH ${desc} max_abs_err=${fmtErr(maxAbs)}${scaleNote}${stepNote}` };
  }
  const where = aDims.length ? `${worst} ${fmtDims(unravel(worst, aDims))}` : `${worst}`;
  const tol = isFloat ? ` (rtol=${rtol} atol=${fmtErr(atol)}${atolScale > 0 ? ` = max(${atolFloor}, ${atolScale} * scale ${fmtErr(scale)})` : ''}${step > 0 ? `, or one step ${step}` : ''})` : ' (exact)';
  return {
    ok: false,
    line: `${head} MISMATCH ${desc} max_abs_err=${fmtErr(maxAbs)} mismatched=${bad}/${n}${tol} ` +
      `worst index ${where}: expected ${fmtValue(exp[worst])} actual ${fmtValue(act[worst])}`,
  };
}

// ---------------------------------------------------------------------------
// Detection records (--detections)
// ---------------------------------------------------------------------------

function sameDims(a, b) {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function close(a, b, rtol, atol) {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  return a === b || Math.abs(a - b) <= atol + rtol * Math.abs(b);
}

/**
 * Compares the per-detection outputs `idx` (indices into expected/actual) as
 * detection records. Returns {ok, lines}. `atolScale`: as --atol-scale, for the
 * scores and the other floating-point outputs that are not in pixels.
 */
export function compareDetections(idx, names, expected, actual, rtol, atol, pixelAtol, atolScale = 0) {
  const lines = [];
  const n = expected[idx[0]].dims[0];
  const head = `detections (outputs ${idx.join(',')}, N=${n}):`;
  for (const k of idx) {
    const e = expected[k];
    const a = actual[k];
    const aDims = Array.from(a.dims, Number);
    if (a.type !== e.type || !sameDims(aDims, e.dims)) {
      lines.push(`output ${k} '${names[k]}': MISMATCH expected ${e.type} ${fmtDims(e.dims)}, ` +
        `got ${a.type} ${fmtDims(aDims)}`);
    }
  }
  if (lines.length) return { ok: false, lines: [`${head} MISMATCH`, ...lines] };
  const isFloat = (k) => DTYPE_BY_NAME[expected[k].type].float === true;
  const boxes = idx.find((k) => expected[k].dims.length === 2 && expected[k].dims[1] === 4 && isFloat(k));
  const labels = idx.find((k) => expected[k].dims.length === 1 && !isFloat(k));
  const scores = idx.find((k) => expected[k].dims.length === 1 && isFloat(k));
  if (boxes === undefined || labels === undefined || scores === undefined) {
    return { ok: false, lines: [`${head} MISMATCH cannot tell boxes (Nx4 float), labels (N integer) ` +
      `and scores (N float) among them`] };
  }
  const view = (t) => numericView(t.type, t.data);
  const rowLen = (k) => expected[k].dims.slice(1).reduce((p, q) => p * q, 1);
  const eBox = view(expected[boxes]);
  const aBoxV = numericView(actual[boxes].type, actual[boxes].data);
  const eLab = expected[labels].data, aLab = actual[labels].data;
  const eSc = view(expected[scores]), aSc = numericView(actual[scores].type, actual[scores].data);
  const scaledAtol = (values) => (atolScale > 0 ? Math.max(atol, atolScale * outputScale(values)) : atol);
  const scoreAtol = scaledAtol(eSc);
  // Greedy matching by expected order.
  const used = new Uint8Array(n);
  const match = new Int32Array(n).fill(-1);
  let matched = 0;
  for (let i = 0; i < n; i++) {
    let best = -1;
    let bestErr = Infinity;
    for (let j = 0; j < n; j++) {
      if (used[j] || eLab[i] !== aLab[j] || !close(aSc[j], eSc[i], rtol, scoreAtol)) continue;
      let err = 0;
      let fits = true;
      for (let c = 0; c < 4 && fits; c++) {
        const b = eBox[4 * i + c], a = aBoxV[4 * j + c];
        fits = close(a, b, rtol, pixelAtol);
        err = Math.max(err, Math.abs(a - b));
      }
      if (fits && err < bestErr) { best = j; bestErr = err; }
    }
    if (best >= 0) {
      used[best] = 1;
      match[i] = best;
      matched++;
    }
  }
  const need = n < 50 ? n : Math.ceil(0.98 * n);
  // Every per-detection output under the matching. A matched detection whose other outputs
  // (mask, keypoints) are out of tolerance counts as unmatched: they depend discontinuously on
  // its box (RoiAlign samples at box-relative points, keypoints are a heatmap argmax), so a box
  // within tolerance may still move a few mask pixels or flip a near-tie of the heatmap.
  const differs = new Uint8Array(n);
  const errs = [];
  for (const k of idx) {
    const len = rowLen(k);
    const d = expected[k].dims;
    const e = view(expected[k]);
    const kAtol = k === boxes || (d.length === 3 && d[2] === 3) ? pixelAtol
      : isFloat(k) ? scaledAtol(e) : atol;
    const a = numericView(actual[k].type, actual[k].data);
    const float = isFloat(k);
    let maxAbs = 0;
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const j = match[i];
      if (j < 0) continue;
      for (let c = 0; c < len; c++) {
        const b = e[i * len + c], v = a[j * len + c];
        if (float) {
          if (!close(v, b, rtol, kAtol)) {
            bad++;
            differs[i] = 1;
          }
          if (Number.isFinite(v - b)) maxAbs = Math.max(maxAbs, Math.abs(v - b));
        } else if (v !== b) {
          bad++;
          differs[i] = 1;
          const d = typeof v === 'bigint' ? Math.abs(Number(v - b)) : Math.abs(v - b);
          maxAbs = Math.max(maxAbs, d);
        }
      }
    }
    errs.push(`output ${k} '${names[k]}' ${fmtDims(expected[k].dims)} ${expected[k].type} ` +
      `max_abs_err=${fmtErr(maxAbs)}${bad ? ` ${bad} values out of tolerance (rtol=${rtol} atol=${kAtol})` : ''}`);
  }
  const differing = differs.reduce((p, q) => p + q, 0);
  const ok = matched - differing >= need;
  lines.push(`${head} ${ok ? 'OK' : 'MISMATCH'} matched ${matched - differing}/${n} (need ${need})` +
    (differing ? `; ${differing} matched by box and score differ in another output` : ''));
  for (const l of errs) lines.push(`  ${l}`);
  return { ok, lines };
}

// ---------------------------------------------------------------------------
// One verification
// ---------------------------------------------------------------------------

// The model's bytes with `nodes` added to its graph and `outputs` (names) to its outputs.
function withAddedOutputs(modelBytes, nodes, outputs) {
  const addition = GraphPart.encode(GraphPart.create({
    graph: { node: nodes, output: outputs.map((name) => ({ name })) },
  })).finish();
  return Buffer.concat([modelBytes, Buffer.from(addition)]);
}

// A Constant node of an int64 scalar.
function int64Constant(name, value) {
  return {
    output: [name], name, opType: 'Constant',
    attribute: [{ name: 'value', type: 4, t: { dataType: 7, int64Data: [value] } }],
  };
}

// Runs `session` on `feeds` and returns [name, ORT tensor] pairs, one per tensor: a tensor output
// is itself; a sequence output (ONNX Runtime's Node API returns no sequences) is its elements in
// order, named "name[i]", as libtorch's returned list flattens. The elements are read through
// outputs added to a copy of the model: its sequences' lengths (SequenceLength), then SequenceAt
// of each position.
async function runFlattened(modelPath, session, feeds, sessionOptions) {
  const meta = session.outputMetadata || [];
  let sequences = [];
  let modelBytes;
  if (meta.some((m) => m && m.isTensor === false)) {  // a sequence, or an optional (returned)
    modelBytes = fs.readFileSync(modelPath);
    const outputs = GraphPart.decode(modelBytes).graph?.output || [];
    sequences = outputs.filter((o) => o.type && o.type.sequenceType).map((o) => o.name);
  }
  if (sequences.length === 0) {
    const results = await session.run(feeds);
    return session.outputNames.map((name) => [name, results[name]]);
  }
  const tag = '__torchonnx_verify';
  const lengthNodes = sequences.map((seq, j) => ({
    input: [seq], output: [`${tag}_length_${j}`], name: `${tag}_length_${j}`,
    opType: 'SequenceLength',
  }));
  const lengthNames = lengthNodes.map((n) => n.output[0]);
  let lengths;
  const withLengths = await ort.InferenceSession.create(
    withAddedOutputs(modelBytes, lengthNodes, lengthNames), sessionOptions);
  try {
    const r = await withLengths.run(feeds, lengthNames);
    lengths = lengthNames.map((name) => Number(r[name].data[0]));
  } finally {
    await withLengths.release();
  }
  const nodes = [];
  const elementNames = new Map();  // sequence -> its elements' added output names
  sequences.forEach((seq, j) => {
    const names = [];
    for (let i = 0; i < lengths[j]; i++) {
      const index = `${tag}_index_${j}_${i}`;
      const element = `${tag}_element_${j}_${i}`;
      nodes.push(int64Constant(index, i));
      nodes.push({ input: [seq, index], output: [element], name: element, opType: 'SequenceAt' });
      names.push(element);
    }
    elementNames.set(seq, names);
  });
  const tensorNames = session.outputNames.filter((name) => !elementNames.has(name));
  const added = [...elementNames.values()].flat();
  const expanded = await ort.InferenceSession.create(
    withAddedOutputs(modelBytes, nodes, added), sessionOptions);
  try {
    const r = await expanded.run(feeds, [...tensorNames, ...added]);
    const out = [];
    for (const name of session.outputNames) {
      if (!elementNames.has(name)) {
        out.push([name, r[name]]);
        continue;
      }
      elementNames.get(name).forEach((element, i) => out.push([`${name}[${i}]`, r[element]]));
    }
    return out;
  } finally {
    await expanded.release();
  }
}

function listNumbered(dir, prefix) {
  const re = new RegExp(`^${prefix}_(\\d+)\\.pb$`);
  const nums = [];
  for (const f of fs.readdirSync(dir)) {
    const m = re.exec(f);
    if (m) nums.push(Number(m[1]));
  }
  nums.sort((a, b) => a - b);
  nums.forEach((v, i) => {
    if (v !== i) throw new UsageError(`${dir}: ${prefix}_${i}.pb is missing (found ${prefix}_${v}.pb)`);
  });
  return nums.length;
}

function toOrtTensor(t) {
  return new ort.Tensor(t.type, t.data, t.dims);
}

/**
 * Verifies MODEL on DATA_DIR. Returns {code, lines}: code 0 = all match,
 * 1 = mismatch, 2 = error (lines then ends with an "error: ..." line).
 */
export async function verify(modelPath, dataDir, rtol = DEFAULT_RTOL, atol = DEFAULT_ATOL,
  detections = false, pixelAtol = undefined, compare = {}, quiet = false) {
  const lines = [];
  let session = null;
  try {
    if (typeof modelPath !== 'string' || !modelPath) throw new UsageError('no model path given');
    if (typeof dataDir !== 'string' || !dataDir) throw new UsageError('no data directory given');
    if (!Number.isFinite(rtol) || rtol < 0) throw new UsageError(`bad rtol: ${rtol}`);
    if (!Number.isFinite(atol) || atol < 0) throw new UsageError(`bad atol: ${atol}`);
    for (const [key, v] of Object.entries(compare)) {
      if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new UsageError(`bad ${key}: ${v}`);
    }
    if (!fs.existsSync(modelPath)) throw new UsageError(`model file not found: ${modelPath}`);
    if (!fs.statSync(modelPath).isFile()) throw new UsageError(`model path is not a file: ${modelPath}`);
    if (!fs.existsSync(dataDir)) throw new UsageError(`data directory not found: ${dataDir}`);
    if (!fs.statSync(dataDir).isDirectory()) throw new UsageError(`data path is not a directory: ${dataDir}`);

    const nIn = listNumbered(dataDir, 'input');
    const nOut = listNumbered(dataDir, 'output');
    if (nOut === 0) throw new UsageError(`${dataDir}: no output_0.pb (nothing to compare)`);
    const inputs = [];
    for (let i = 0; i < nIn; i++) inputs.push(readTensorProto(path.join(dataDir, `input_${i}.pb`)));
    const expected = [];
    for (let k = 0; k < nOut; k++) expected.push(readTensorProto(path.join(dataDir, `output_${k}.pb`)));

    const sessionOptions = {
      graphOptimizationLevel: 'all',
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      // quiet: a run expected to fail (the test harness's If probes) logs nothing; its error is in
      // the report all the same.
      logSeverityLevel: quiet ? 4 : 3,
    };
    try {
      session = await ort.InferenceSession.create(modelPath, sessionOptions);
    } catch (e) {
      throw new UsageError(`ONNX Runtime failed to load ${modelPath}: ${e.message}`);
    }

    const inNames = session.inputNames;
    if (nIn !== inNames.length) {
      throw new UsageError(
        `${dataDir} has ${nIn} input_*.pb file(s), the model has ${inNames.length} input(s): ` +
        `[${inNames.map((s) => `'${s}'`).join(', ')}]`);
    }
    const feeds = {};
    inNames.forEach((name, i) => { feeds[name] = toOrtTensor(inputs[i]); });

    let flat;
    try {
      flat = await runFlattened(modelPath, session, feeds, sessionOptions);
    } catch (e) {
      throw new UsageError(`ONNX Runtime failed to run ${modelPath}: ${e.message}`);
    }
    if (compare.step > 0 && compare.exactInt8 && INT8_MAY_SATURATE) {
      // Loaded and run at "all" above; compared at "basic" (Note [Quantized comparisons without
      // VNNI]).
      const basicOptions = { ...sessionOptions, graphOptimizationLevel: 'basic' };
      await session.release();
      session = null;
      try {
        session = await ort.InferenceSession.create(modelPath, basicOptions);
        flat = await runFlattened(modelPath, session, feeds, basicOptions);
      } catch (e) {
        throw new UsageError(`ONNX Runtime failed to run ${modelPath} at level basic: ${e.message}`);
      }
      lines.push('note: quantized outputs compared at graph optimization level basic (an exact ' +
        'reference, and this CPU has no VNNI: the fused u8s8 kernels of level all saturate; the ' +
        'model loaded and ran there)');
    }
    const outNames = flat.map(([name]) => name);
    const results = Object.fromEntries(flat);

    let ok = true;
    const n = Math.min(nOut, outNames.length);
    const perDetection = new Set();
    if (detections && n > 0 && expected[0].dims.length > 0) {
      const count = expected[0].dims[0];
      for (let k = 0; k < n; k++) {
        if (expected[k].dims.length > 0 && expected[k].dims[0] === count) perDetection.add(k);
      }
      const actual = outNames.map((name) => results[name]);
      const r = compareDetections([...perDetection], outNames, expected, actual, rtol, atol,
        pixelAtol === undefined ? atol : pixelAtol, compare.atolScale || 0);
      ok = ok && r.ok;
      lines.push(...r.lines);
    }
    for (let k = 0; k < n; k++) {
      if (perDetection.has(k)) continue;
      const r = compareOutput(k, outNames[k], expected[k], results[outNames[k]], rtol, atol, compare);
      ok = ok && r.ok;
      lines.push(r.line);
    }
    if (nOut !== outNames.length) {
      ok = false;
      lines.push(`MISMATCH output count: ${dataDir} has ${nOut} output_*.pb file(s), ` +
        `the model returns ${outNames.length} tensor(s) (a sequence output counts its elements)`);
    }
    return { code: ok ? 0 : 1, lines };
  } catch (e) {
    const msg = e instanceof UsageError ? e.message : (e && e.stack) || String(e);
    lines.push(`error: ${msg}`);
    return { code: 2, lines };
  } finally {
    if (session) {
      try { await session.release(); } catch { /* ignore */ }
    }
  }
}

// ---------------------------------------------------------------------------
// Front ends
// ---------------------------------------------------------------------------

function parseArgs(argv) {
  const pos = [];
  let rtol = DEFAULT_RTOL;
  let atol = DEFAULT_ATOL;
  let detections = false;
  let pixelAtol;
  const compare = {};
  const compareKeys = { '--atol-scale': 'atolScale', '--step': 'step', '--step-fraction': 'stepFraction' };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    if (a === '--detections') {
      detections = true;
      continue;
    }
    if (a === '--exact-int8') {
      compare.exactInt8 = 1;
      continue;
    }
    let val;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { val = a.slice(eq + 1); a = a.slice(0, eq); }
    if (a === '--rtol' || a === '--atol' || a === '--pixel-atol' || a in compareKeys) {
      if (val === undefined) {
        if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
        val = argv[++i];
      }
      const x = Number(val);
      if (val === '' || !Number.isFinite(x) || x < 0) throw new UsageError(`bad value for ${a}: ${val}`);
      if (a === '--rtol') rtol = x;
      else if (a === '--atol') atol = x;
      else if (a === '--pixel-atol') pixelAtol = x;
      else compare[compareKeys[a]] = x;
    } else if (a.startsWith('--')) {
      throw new UsageError(`unknown option ${a}`);
    } else {
      pos.push(a);
    }
  }
  if (pos.length !== 2) throw new UsageError('expected MODEL.onnx and DATA_DIR');
  return { model: pos[0], data: pos[1], rtol, atol, detections, pixelAtol, compare };
}

async function mainCli(argv) {
  let args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    process.stderr.write(`error: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  const { code, lines } = await verify(args.model, args.data, args.rtol, args.atol, args.detections,
    args.pixelAtol, args.compare);
  for (const l of lines) {
    if (l.startsWith('error: ')) process.stderr.write(l + '\n');
    else process.stdout.write(l + '\n');
  }
  return code;
}

function numOr(v, dflt, what) {
  if (v === undefined || v === null) return dflt;
  const x = Number(v);
  if (typeof v === 'boolean' || !Number.isFinite(x)) throw new UsageError(`bad ${what}: ${JSON.stringify(v)}`);
  return x;
}

async function handleRequest(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    return { ok: false, report: `error: request is not valid JSON: ${e.message}` };
  }
  if (!req || typeof req !== 'object' || Array.isArray(req)) {
    return {
      ok: false,
      report: 'error: request must be a JSON object {"model","data","rtol","atol","detections"}',
    };
  }
  let rtol, atol, pixelAtol, compare;
  try {
    rtol = numOr(req.rtol, DEFAULT_RTOL, 'rtol');
    atol = numOr(req.atol, DEFAULT_ATOL, 'atol');
    pixelAtol = numOr(req.pixel_atol, atol, 'pixel_atol');
    compare = {
      atolScale: numOr(req.atol_scale, 0, 'atol_scale'),
      step: numOr(req.step, 0, 'step'),
      stepFraction: numOr(req.step_fraction, DEFAULT_STEP_FRACTION, 'step_fraction'),
      exactInt8: req.exact_int8 === true ? 1 : 0,
    };
  } catch (e) {
    return { ok: false, report: `error: ${e.message}` };
  }
  if (req.detections !== undefined && typeof req.detections !== 'boolean') {
    return { ok: false, report: `error: bad detections: ${JSON.stringify(req.detections)}` };
  }
  if (req.exact_int8 !== undefined && typeof req.exact_int8 !== 'boolean') {
    return { ok: false, report: `error: bad exact_int8: ${JSON.stringify(req.exact_int8)}` };
  }
  if (req.quiet !== undefined && typeof req.quiet !== 'boolean') {
    return { ok: false, report: `error: bad quiet: ${JSON.stringify(req.quiet)}` };
  }
  const { code, lines } = await verify(req.model, req.data, rtol, atol, req.detections === true,
    pixelAtol, compare, req.quiet === true);
  return { ok: code === 0, report: lines.join('\n') };
}

async function mainServe() {
  // Keep stdout for the protocol only: anything logged goes to stderr.
  const toErr = (...a) => process.stderr.write(a.map(String).join(' ') + '\n');
  console.log = toErr;
  console.info = toErr;
  console.debug = toErr;
  const out = (obj) => new Promise((resolve) => {
    // Resolve once the data is handed to the OS, so each answer is flushed.
    process.stdout.write(JSON.stringify(obj) + '\n', () => resolve());
  });
  process.on('uncaughtException', (e) => toErr(`verify --serve: uncaught: ${(e && e.stack) || e}`));
  process.on('unhandledRejection', (e) => toErr(`verify --serve: unhandled: ${(e && e.stack) || e}`));

  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const raw of rl) {
    const line = raw.trim();
    if (!line) continue;
    let resp;
    try {
      resp = await handleRequest(line);
    } catch (e) {
      resp = { ok: false, report: `error: ${(e && e.message) || String(e)}` };
    }
    await out(resp);
  }
  return 0;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  return argv.length === 1 && argv[0] === '--serve' ? mainServe() : mainCli(argv);
}

// Run only when executed directly (importing this module just gives verify()).
function isMain() {
  if (!process.argv[1]) return false;
  try {
    return fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}
if (isMain()) {
  main().then(
    (code) => { process.exitCode = code; },
    (e) => { process.stderr.write(`error: ${(e && e.stack) || e}\n`); process.exitCode = 2; },
  );
}
