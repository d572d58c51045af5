// tools/verify/verify.mjs's comparator on the synthetic cases of comparator_cases.json (issue 38,
// item 2); tests/verify/comparators_test.cpp runs src/verify/compare.cpp on the same cases, and
// both must give each case's expected verdict, so the two comparators agree on every one.
//
//   node tests/verify/comparators_test.mjs tests/verify/comparator_cases.json
// Exit 0 when verify.mjs gives every case its verdict, 1 otherwise (each wrong one named).
import fs from 'node:fs';
import { compareDetections, compareOutput } from '../../tools/verify/verify.mjs';

const ARRAYS = {
  float32: Float32Array,
  float64: Float64Array,
  int64: BigInt64Array,
  int32: Int32Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

function value(v) {
  if (v === 'NaN') return NaN;
  if (v === 'Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  return v;
}

// A case's tensor spec as verify.mjs holds a tensor read from a TensorProto: {type, dims, data}.
function tensor(spec) {
  const Array_ = ARRAYS[spec.dtype];
  if (!Array_) throw new Error(`unknown dtype ${spec.dtype}`);
  const n = spec.shape.reduce((a, b) => a * b, 1);
  const big = Array_ === BigInt64Array;
  const data = new Array_(n);
  const put = (i, v) => { data[i] = big ? BigInt(v) : value(v); };
  if (spec.data) {
    if (spec.data.length !== n) throw new Error(`${spec.data.length} values for shape [${spec.shape}]`);
    spec.data.forEach((v, i) => put(i, v));
  } else if (spec.range) {
    for (let i = 0; i < n; i++) put(i, spec.range[0] + i * spec.range[1]);
  } else {
    for (let i = 0; i < n; i++) put(i, spec.fill);
  }
  for (const [i, v] of spec.set || []) put(i, v);
  return { name: '', type: spec.dtype, dims: spec.shape, data };
}

function verdict(c) {
  const t = c.tolerance;
  const rtol = t.rtol;
  const atol = t.atol;
  if (c.detections) {
    const expected = c.expected.map(tensor);
    const actual = c.actual.map(tensor);
    // As verify(): the per-detection outputs are those whose dim 0 is the first expected one's.
    const n = expected[0].dims[0];
    const idx = expected.map((e, k) => k).filter((k) => expected[k].dims[0] === n);
    const names = expected.map((e, k) => `output${k}`);
    const pixelAtol = t.pixel_atol === undefined ? atol : t.pixel_atol;
    return compareDetections(idx, names, expected, actual, rtol, atol, pixelAtol,
      t.atol_scale || 0);
  }
  const r = compareOutput(0, 'output', tensor(c.expected), tensor(c.actual), rtol, atol, {
    atolScale: t.atol_scale || 0,
    step: t.step || 0,
    stepFraction: t.step_fraction === undefined ? 0.02 : t.step_fraction,
  });
  return { ok: r.ok, lines: [r.line] };
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node comparators_test.mjs comparator_cases.json\n');
  process.exit(2);
}
const { cases } = JSON.parse(fs.readFileSync(file, 'utf8'));
let wrong = 0;
let run = 0;
for (const c of cases) {
  if (c.runners && !c.runners.includes('verify.mjs')) continue;
  run++;
  const r = verdict(c);
  if (r.ok !== c.pass) {
    wrong++;
    process.stdout.write(`WRONG: '${c.name}': verify.mjs says ${r.ok ? 'pass' : 'fail'}, the rule ` +
      `says ${c.pass ? 'pass' : 'fail'}\n${r.lines.map((l) => `  ${l}`).join('\n')}\n`);
  }
}
process.stdout.write(`verify.mjs: ${run - wrong} of ${run} comparator cases give the expected verdict\n`);
process.exitCode = wrong ? 1 : 0;
