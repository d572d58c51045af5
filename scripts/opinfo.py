#!/usr/bin/python3
"""The OpInfo sweep (issue 21): every operator of PyTorch's OpInfo database exported by torchonnx
and by torch.onnx, run in ONNX Runtime and compared with libtorch.

Subcommands (scripts/opinfo.sh runs them in order; see docs/opinfo.md for the results):

  fixtures OUT [--ops A,B] [--ops-file F] [--cap N] [--cap-other N] [--script-cap N] [--timeout S]
      For each OpInfo of torch.testing._internal.common_methods_invocations.op_db (the torch of
      this python: 1.13 on Debian 12, 2.6 on Debian 13) and each sample of
      op.sample_inputs('cpu', dtype) for float32 (at most --cap samples) and int64 / bool where
      the op takes them (--cap-other each): a traced .pt (a module calling op.op(input, *args,
      **kwargs), non-tensor arguments baked in, every tensor argument an input) and, for the
      first --script-cap samples per dtype where torch.jit.script compiles a wrapper written as
      source, a scripted .pt; each with its test data OUT/fixtures/OP/ID/data/{input,output}_K.pb
      (serialized onnx.TensorProto, as `torchonnx export --save-test-data` writes and
      tools/verify/verify.mjs reads; outputs from the saved module run by libtorch) and
      inputs.pt (for torch.onnx). Skipped, and counted per op with the reason: random ops (by name
      and by running twice), samples with complex, sparse, quantized, bfloat16 or float16 tensors,
      samples libtorch rejects, outputs that are not a tensor or a tuple/list of tensors. The ops
      run in a worker process (address space limited, --timeout per op); a hang or crash costs
      that op only. OUT/manifest.jsonl lists the fixtures (op, variant, kind, dtype, sample,
      input shapes) and the ops.
  run OUT --exporter torchonnx|torch.onnx --column NAME [--cli PATH] [--opset 17] [--jobs N]
      Exports every fixture (torchonnx: `torchonnx export model.pt --inputs data --opset N`, on
      a private copy of the CLI and its library so that a rebuild during the sweep does not
      break it; torch.onnx: torch.onnx.export of the loaded .pt in a worker process), runs the
      model in ONNX Runtime (verify.mjs --serve, rtol 1e-3, atol 1e-5) and classifies it: pass,
      mismatch, unsupported (exit 4: no converter), rejected (exit 5), invalid (6), ort_error,
      internal (1), other (any other exit, crash, timeout). OUT/results/NAME.jsonl.
  report --column LABEL=OUT:NAME ... [--out docs/opinfo.md] [--failures FILE]
      The table: per op samples passed/total in each column and torchonnx's failure classes.
  check OUT --list tests/opinfo/slice.txt --cli PATH
      The ctest slice: runs the listed fixtures through torchonnx and fails unless each passes.

Works with torch 1.13 and 2.x. The fixtures are deterministic (seeded samples).
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import json
import os
import re
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VERIFY = os.path.join(ROOT, 'tools', 'verify', 'verify.mjs')
RTOL, ATOL = 1e-3, 1e-5
CLASSES = ('pass', 'mismatch', 'unsupported', 'rejected', 'invalid', 'ort_error', 'internal',
           'other')

# Ops whose result is random or uninitialized memory (also caught by running each fixture twice).
RANDOM_WORDS = ('rand', 'normal', 'bernoulli', 'multinomial', 'dropout', 'rrelu', 'uniform',
                'exponential', 'geometric', 'cauchy', 'log_normal', 'empty', 'poisson',
                'fractional_max_pool')


def import_op_db():
    """op_db, without the test-only modules Debian's python3-torch does not depend on."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        m = types.ModuleType('expecttest')
        m.TestCase = unittest.TestCase
        m.ACCEPT = False
        sys.modules['expecttest'] = m
    try:
        import setuptools.command.build_ext  # noqa: F401
    except ImportError:  # Debian 13's root has no setuptools: common_utils imports cpp_extension
        sys.modules['torch.utils.cpp_extension'] = types.ModuleType('torch.utils.cpp_extension')
    import warnings
    warnings.filterwarnings('ignore')
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def op_key(op):
    return op.name + ('.' + op.variant_test_name if op.variant_test_name else '')


def safe_name(s):
    return re.sub(r'[^A-Za-z0-9_.-]', '_', s)


# ---------------------------------------------------------------------------
# TensorProto files
# ---------------------------------------------------------------------------

# The fixture makers' writer (tests/fixtures/tensor_proto.py), imported where it is used: this
# script imports torch only in its workers.
def _tensor_proto():
    if os.path.join(ROOT, 'tests', 'fixtures') not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, 'tests', 'fixtures'))
    import tensor_proto
    return tensor_proto


def onnx_types():
    return _tensor_proto().ONNX_TYPES


def tensor_proto_bytes(t):
    return _tensor_proto().tensor_proto_bytes(t)


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

class Skip(Exception):
    pass


class Slot:
    """A tensor argument's place in the call template."""

    def __init__(self, i):
        self.i = i


def templatize(v, tensors):
    import torch
    if isinstance(v, torch.Tensor):
        tensors.append(v)
        return Slot(len(tensors) - 1)
    if isinstance(v, list):
        return [templatize(x, tensors) for x in v]
    if isinstance(v, tuple) and not hasattr(v, '_fields'):
        return tuple(templatize(x, tensors) for x in v)
    if isinstance(v, dict):
        return {k: templatize(x, tensors) for k, x in v.items()}
    return v


def fill(v, xs):
    if isinstance(v, Slot):
        return xs[v.i]
    if isinstance(v, list):
        return [fill(x, xs) for x in v]
    if isinstance(v, tuple):
        return tuple(fill(x, xs) for x in v)
    if isinstance(v, dict):
        return {k: fill(x, xs) for k, x in v.items()}
    return v


def flat_outputs(r):
    import torch
    if isinstance(r, torch.Tensor):
        return [r]
    if isinstance(r, (tuple, list)) and r and all(isinstance(x, torch.Tensor) for x in r):
        return list(r)
    raise Skip('output not a tensor or a tuple of tensors')


def make_wrapper(fn, template):
    import torch

    class OpModule(torch.nn.Module):
        def forward(self, *xs):
            inp, args, kwargs = fill(template, xs)
            r = fn(inp, *args, **kwargs)
            return r if isinstance(r, torch.Tensor) else tuple(r)

    return OpModule()


def script_callee(fn):
    """The source text naming fn, or None: ('func', 'torch.add') or ('method', 'add')."""
    import torch
    import torch.nn.functional
    name = getattr(fn, '__name__', None)
    if not name or name == '<lambda>':
        return None
    for prefix, mod in (('torch', torch), ('torch.nn.functional', torch.nn.functional),
                        ('torch.special', getattr(torch, 'special', None)),
                        ('torch.linalg', getattr(torch, 'linalg', None)),
                        ('torch.fft', getattr(torch, 'fft', None))):
        if mod is not None and getattr(mod, name, None) is fn:
            return ('func', prefix + '.' + name)
    if getattr(torch.Tensor, name, None) is fn:
        return ('method', name)
    return None


def render(v):
    import math
    import torch
    if isinstance(v, Slot):
        return 't%d' % v.i
    if v is None or isinstance(v, (bool, str)):
        return repr(v)
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if isinstance(v, torch.Size):
        return '[' + ', '.join(render(x) for x in v) + ']'
    if isinstance(v, (list, tuple)):
        if not v:
            raise Skip('empty list literal')
        return '[' + ', '.join(render(x) for x in v) + ']'
    if isinstance(v, (torch.dtype, torch.memory_format, torch.layout)):
        return str(v)
    if isinstance(v, torch.device):
        return 'torch.device(%r)' % str(v)
    raise Skip('no literal for %s' % type(v).__name__)


def script_source(callee, template, n_inputs, n_outputs, tuple_out):
    kind, name = callee
    inp, args, kwargs = template
    parts = [render(a) for a in args] + ['%s=%s' % (k, render(v)) for k, v in kwargs.items()]
    if kind == 'func':
        call = '%s(%s)' % (name, ', '.join([render(inp)] + parts))
    else:
        if not isinstance(inp, Slot):
            raise Skip('method on a non-tensor')
        call = '%s.%s(%s)' % (render(inp), name, ', '.join(parts))
    params = ', '.join(['self'] + ['t%d: Tensor' % i for i in range(n_inputs)])
    ret = '(' + ', '.join('r[%d]' % k for k in range(n_outputs)) + ',)' if tuple_out else 'r'
    return ('import torch\nimport torch.nn.functional\nfrom torch import Tensor\n\n\n'
            'class OpModule(torch.nn.Module):\n'
            '    def forward(%s):\n        r = %s\n        return %s\n' % (params, call, ret))


def same_outputs(a, b):
    import torch
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.is_floating_point:
            if not torch.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def run_twice(m, xs):
    import torch
    torch.manual_seed(1)
    a = [o.detach().clone() for o in flat_outputs(m(*[x.clone() for x in xs]))]
    torch.manual_seed(2)
    b = [o.detach().clone() for o in flat_outputs(m(*[x.clone() for x in xs]))]
    if not same_outputs(a, b):
        raise Skip('random (outputs differ between two runs)')
    return a


def write_fixture(folder, module_save, xs, outs):
    import torch
    os.makedirs(os.path.join(folder, 'data'), exist_ok=True)
    module_save(os.path.join(folder, 'model.pt'))
    for i, x in enumerate(xs):
        with open(os.path.join(folder, 'data', 'input_%d.pb' % i), 'wb') as f:
            f.write(tensor_proto_bytes(x))
    for k, o in enumerate(outs):
        with open(os.path.join(folder, 'data', 'output_%d.pb' % k), 'wb') as f:
            f.write(tensor_proto_bytes(o))
    torch.save(list(xs), os.path.join(folder, 'inputs.pt'))


def make_sample(op, key, dtype_name, idx, sample, out_dir, with_script):
    """Fixtures of one sample: a list of manifest records (raises Skip)."""
    import torch
    import warnings
    warnings.filterwarnings('ignore')
    tensors = []
    template = templatize((sample.input, tuple(sample.args), dict(sample.kwargs)), tensors)
    types_ok = onnx_types()
    for t in tensors:
        if t.layout != torch.strided or t.is_quantized:
            raise Skip('sparse or quantized tensor')
        if t.dtype not in types_ok:
            raise Skip('%s tensor' % str(t.dtype).replace('torch.', ''))
    xs = [t.detach().clone().contiguous() for t in tensors]
    fn = op.op
    try:
        inp, args, kwargs = fill(template, [x.clone() for x in xs])
        raw = fn(inp, *args, **kwargs)
        eager = flat_outputs(raw)
    except Skip:
        raise
    except Exception as e:
        raise Skip('libtorch rejects the sample (%s)' % type(e).__name__)
    for o in eager:
        if o.dtype not in types_ok:
            raise Skip('%s output' % str(o.dtype).replace('torch.', ''))
    tuple_out = not isinstance(raw, torch.Tensor)
    records = []
    base = dict(op=key, name=op.name, variant=op.variant_test_name, dtype=dtype_name, sample=idx,
                inputs=[[list(x.shape), str(x.dtype).replace('torch.', '')] for x in xs],
                outputs=len(eager))
    fid = '%s/%s_%d' % (safe_name(key), dtype_name, idx)
    # traced
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            traced = torch.jit.trace(make_wrapper(fn, template), tuple(x.clone() for x in xs),
                                     check_trace=False)
    except Exception as e:
        raise Skip('torch.jit.trace fails (%s)' % type(e).__name__)
    with tempfile.TemporaryDirectory() as tmp:
        traced.save(os.path.join(tmp, 'm.pt'))
        loaded = torch.jit.load(os.path.join(tmp, 'm.pt'))
        try:
            outs = run_twice(loaded, xs)
        except Skip:
            raise
        except Exception as e:
            raise Skip('the traced module fails to run (%s)' % type(e).__name__)
    folder = os.path.join(out_dir, 'fixtures', fid + '_trace')
    write_fixture(folder, traced.save, xs, outs)
    records.append(dict(base, id=fid + '_trace', kind='trace'))
    if not with_script:
        return records
    callee = script_callee(fn)
    if callee is None:
        return records
    try:
        src = script_source(callee, template, len(xs), len(eager), tuple_out)
    except Skip:
        return records
    folder = os.path.join(out_dir, 'fixtures', fid + '_script')
    os.makedirs(folder, exist_ok=True)
    src_path = os.path.join(folder, 'wrapper.py')
    with open(src_path, 'w') as f:
        f.write(src)
    try:
        spec = importlib.util.spec_from_file_location('opinfo_wrapper_%d' % id(folder), src_path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            scripted = torch.jit.script(mod.OpModule())
        with tempfile.TemporaryDirectory() as tmp:
            scripted.save(os.path.join(tmp, 'm.pt'))
            souts = run_twice(torch.jit.load(os.path.join(tmp, 'm.pt')), xs)
        if not same_outputs(souts, outs):
            raise Skip('scripted differs from traced')
        write_fixture(folder, scripted.save, xs, souts)
        records.append(dict(base, id=fid + '_script', kind='script'))
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
    return records


def make_op(op, out_dir, caps, script_cap):
    import torch
    key = op_key(op)
    rec = dict(op=key, fixtures=[], skipped=collections.Counter())
    name = op.name.lower()
    if any(w in name for w in RANDOM_WORDS):
        rec['skipped']['random op'] += 1
        return rec
    shutil.rmtree(os.path.join(out_dir, 'fixtures', safe_name(key)), ignore_errors=True)
    supported = op.supported_dtypes('cpu')
    for dtype_name, dtype in (('float32', torch.float32), ('int64', torch.int64),
                              ('bool', torch.bool)):
        if dtype not in supported:
            continue
        try:
            torch.manual_seed(0)
            samples = iter(op.sample_inputs('cpu', dtype, requires_grad=False))
        except Exception as e:
            rec['skipped']['sample_inputs fails (%s)' % type(e).__name__] += 1
            continue
        made = 0
        for idx in range(40):
            if made >= caps[dtype_name]:
                break
            try:
                sample = next(samples)
            except StopIteration:
                break
            except Exception as e:
                rec['skipped']['sample_inputs fails (%s)' % type(e).__name__] += 1
                break
            try:
                records = make_sample(op, key, dtype_name, idx, sample, out_dir,
                                      made < script_cap)
                rec['fixtures'] += records
                made += 1
            except Skip as e:
                rec['skipped'][str(e)] += 1
            except Exception as e:
                rec['skipped']['fixture fails (%s)' % type(e).__name__] += 1
    return rec


def limit_memory(gb):
    try:
        resource.setrlimit(resource.RLIMIT_AS, (gb << 30, gb << 30))
    except (ValueError, OSError):
        pass


def private_channels():
    """(requests, answers): the pipes to the parent, moved off fds 0 and 1, which then read
    /dev/null and write to stderr, so that an op that reads stdin or prints cannot take a request
    or garble an answer."""
    req = os.fdopen(os.dup(0), 'r')
    ans = os.fdopen(os.dup(1), 'w')
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull)
    sys.stdout = sys.stderr
    return req, ans


def cmd_fixture_worker(a):
    """Makes the fixtures of op_db[i] for each index read on stdin; one JSON line each."""
    limit_memory(a.mem_gb)
    import torch
    torch.set_num_threads(1)
    op_db = import_op_db()
    caps = {'float32': a.cap, 'int64': a.cap_other, 'bool': a.cap_other}
    req, ans = private_channels()
    for line in req:
        i = int(line)
        try:
            rec = make_op(op_db[i], a.out, caps, a.script_cap)
        except Exception as e:
            rec = dict(op=op_key(op_db[i]), fixtures=[],
                       skipped={'op fails (%s)' % type(e).__name__: 1})
        ans.write(json.dumps(rec) + '\n')
        ans.flush()


class Worker:
    """A child process answering one JSON line per request line; restarted after a crash or
    a timeout."""

    def __init__(self, argv):
        self.argv = argv
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def stop(self):
        if self.proc:
            try:
                self.proc.stdin.close()
                self.proc.wait(10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def ask(self, line, timeout):
        """The answer (a dict), or None after a crash or timeout (the worker is then killed)."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(line + '\n')
            self.proc.stdin.flush()
            end = time.time() + timeout
            while True:
                r, _, _ = select.select([self.proc.stdout], [], [], max(0.0, end - time.time()))
                if not r:
                    raise TimeoutError()
                out = self.proc.stdout.readline()
                if not out:
                    raise EOFError()
                if out.startswith('{'):
                    return json.loads(out)
        except (TimeoutError, EOFError, BrokenPipeError, ValueError) as e:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return {'_error': 'timeout' if isinstance(e, TimeoutError) else 'crash'}


def selected(op_db, ops):
    if not ops:
        return list(range(len(op_db)))
    want = set(ops)
    return [i for i, op in enumerate(op_db) if op_key(op) in want or op.name in want]


def read_list(path):
    """tests/opinfo/slice.txt: OP DTYPE SAMPLE KIND per line (# comments)."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                op, dtype, sample, kind = line.split()
                rows.append((op, dtype, int(sample), kind))
    return rows


def cmd_fixtures(a):
    import torch
    op_db = import_op_db()
    ops = a.ops.split(',') if a.ops else []
    if a.ops_file:
        ops += sorted({r[0] for r in read_list(a.ops_file)})
    idxs = selected(op_db, ops)
    os.makedirs(os.path.join(a.out, 'ops'), exist_ok=True)
    argv = ['nice', '-n', str(a.nice), sys.executable, os.path.abspath(__file__),
            '_fixture_worker', '--out', a.out, '--cap', str(a.cap), '--cap-other',
            str(a.cap_other), '--script-cap', str(a.script_cap), '--mem-gb', str(a.mem_gb)]
    start = time.time()
    lock = threading.Lock()
    todo = list(idxs)
    done = [0]

    def loop():
        w = Worker(argv)
        while True:
            with lock:
                if not todo:
                    break
                i = todo.pop(0)
            key = op_key(op_db[i])
            rec = w.ask(str(i), a.timeout)
            if '_error' in rec:
                rec = dict(op=key, fixtures=[], skipped={'fixture worker %s' % rec['_error']: 1})
                shutil.rmtree(os.path.join(a.out, 'fixtures', safe_name(key)), ignore_errors=True)
            with open(os.path.join(a.out, 'ops', safe_name(key) + '.json'), 'w') as f:
                json.dump(rec, f)
            with lock:
                done[0] += 1
                if a.verbose or done[0] % 50 == 0:
                    print('fixtures: %d/%d ops (%s: %d fixtures) %.0f s' % (
                        done[0], len(idxs), key, len(rec['fixtures']), time.time() - start),
                        flush=True)
        w.stop()

    threads = [threading.Thread(target=loop) for _ in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    write_manifest(a.out, op_db, torch.__version__)
    n = sum(1 for _ in open(os.path.join(a.out, 'manifest.jsonl')))
    print('fixtures: %d ops, %d manifest lines in %s (%.0f s)' % (len(idxs), n, a.out,
                                                                  time.time() - start))


def write_manifest(out, op_db, version):
    """OUT/manifest.jsonl from OUT/ops/*.json: one {"op":..., "skipped":...} line per op of
    op_db (in op_db's order) followed by its fixtures' lines."""
    lines = []
    for op in op_db:
        path = os.path.join(out, 'ops', safe_name(op_key(op)) + '.json')
        if not os.path.exists(path):
            continue
        with open(path) as f:
            rec = json.load(f)
        lines.append(json.dumps({'op': rec['op'], 'fixtures': len(rec['fixtures']),
                                 'skipped': rec['skipped']}))
        lines += [json.dumps(dict(r, type='fixture')) for r in rec['fixtures']]
    with open(os.path.join(out, 'manifest.jsonl'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    with open(os.path.join(out, 'info.json'), 'w') as f:
        json.dump({'torch': version, 'ops_in_db': len(op_db)}, f)


def read_manifest(out):
    ops, fixtures = [], []
    with open(os.path.join(out, 'manifest.jsonl')) as f:
        for line in f:
            r = json.loads(line)
            (fixtures if r.get('type') == 'fixture' else ops).append(r)
    return ops, fixtures


# ---------------------------------------------------------------------------
# Exporting and verifying
# ---------------------------------------------------------------------------

class Verifier(Worker):
    def __init__(self):
        super().__init__(['nice', '-n', '10', 'node', VERIFY, '--serve'])

    def verify(self, model, data):
        """(class, report)."""
        r = self.ask(json.dumps({'model': model, 'data': data, 'rtol': RTOL, 'atol': ATOL}), 120)
        if '_error' in r:
            return 'ort_error', 'verify.mjs ' + r['_error']
        if r['ok']:
            return 'pass', ''
        rep = r['report']
        if any(l.startswith('error: ') for l in rep.splitlines()):
            return 'ort_error', rep
        return 'mismatch', rep


def _pb_fields(buf):
    """(field number, value) of a serialized protobuf message: bytes for length-delimited fields,
    ints for varints; fixed-size fields are skipped."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(buf, i)
            yield field, v
        elif wire == 2:
            ln, i = _read_varint(buf, i)
            yield field, buf[i:i + ln]
            i += ln
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            return


def _read_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def model_input_names(path):
    """The graph inputs of an ONNX model that are not initializers."""
    with open(path, 'rb') as f:
        model = f.read()
    for field, graph in _pb_fields(model):
        if field == 7:
            inputs, inits = [], set()
            for gf, v in _pb_fields(graph):
                if gf == 11:
                    inputs += [bytes(x).decode() for f, x in _pb_fields(v) if f == 1]
                elif gf == 5:
                    inits.update(bytes(x).decode() for f, x in _pb_fields(v) if f == 8)
            return [n for n in inputs if n not in inits]
    return []


def verify_pruned(verifier, onnx_path, data, work):
    """Verifies a model whose exporter dropped inputs it does not read (a zeros_like's input,
    folded away): the data folder's inputs named input_K by --input-names, fed by name."""
    names = model_input_names(onnx_path)
    idx = []
    for n in names:
        m = re.match(r'^input_(\d+)$', n)
        if not m:
            return None
        idx.append(int(m.group(1)))
    pruned = os.path.join(work, 'pruned')
    shutil.rmtree(pruned, ignore_errors=True)
    os.makedirs(pruned)
    for j, k in enumerate(idx):
        os.symlink(os.path.join(data, 'input_%d.pb' % k), os.path.join(pruned, 'input_%d.pb' % j))
    for f in os.listdir(data):
        if f.startswith('output_'):
            os.symlink(os.path.join(data, f), os.path.join(pruned, f))
    return verifier.verify(onnx_path, pruned)


def verify_model(verifier, onnx_path, data, work):
    cls, rep = verifier.verify(onnx_path, data)
    if cls == 'ort_error' and 'input_*.pb file(s), the model has' in rep:
        r = verify_pruned(verifier, onnx_path, data, work)
        if r:
            return r
    return cls, rep


TORCHONNX_EXIT = {1: 'internal', 4: 'unsupported', 5: 'rejected', 6: 'invalid'}


def snapshot_cli(cli, dest):
    """A private copy of the CLI and libtorchonnx (found through its RUNPATH): a rebuild during
    the sweep must not swap the library under it. Waits while the build writes it."""
    shutil.rmtree(dest, ignore_errors=True)  # a file a running sweep executes cannot be written
    os.makedirs(dest)
    libdir = os.path.dirname(os.path.abspath(cli))
    for attempt in range(30):
        shutil.copy2(cli, os.path.join(dest, 'torchonnx'))
        for f in os.listdir(libdir):
            if f.startswith('libtorchonnx.so'):
                src = os.path.join(libdir, f)
                if os.path.isfile(src):
                    shutil.copy2(src, os.path.join(dest, f), follow_symlinks=True)
        # LD_BIND_NOW: a library linked from a half-edited tree (a converter calling a function
        # not yet defined) fails when loaded, not in the exports that reach the call.
        env = dict(os.environ, LD_LIBRARY_PATH=dest, LD_BIND_NOW='1')
        # `ops` loads the registry: a tree mid-edit (two converters for one opset) fails here
        # rather than in every export of the sweep.
        p = subprocess.run([os.path.join(dest, 'torchonnx'), 'ops'], env=env,
                           capture_output=True, text=True)
        if p.returncode == 0:
            return env
        print('opinfo: %s does not run (%s); retrying in 20 s' % (cli, first_line(p.stderr)),
              flush=True)
        time.sleep(20)
    sys.exit('opinfo: %s does not run: %s' % (cli, p.stderr.strip()))


def unsupported_ops(stderr):
    return sorted(set(re.findall(r'^\s+((?:aten|prim|onnx|quantized)::\w+) \(', stderr, re.M)))


def first_line(s):
    """The error line of a message (else its first line), without log noise."""
    lines = [l.strip() for l in s.splitlines()
             if l.strip() and not re.match(r'WARNING: |[WI]\d{8} ', l)]  # glog noise
    for line in lines:
        if 'error' in line.lower():
            return line[:300]
    return lines[0][:300] if lines else ''


def run_torchonnx(fx, folder, opset, env, cli, work, verifier):
    onnx_path = os.path.join(work, 'model.onnx')
    argv = ['nice', '-n', '10', cli, 'export', os.path.join(folder, 'model.pt'), '-o', onnx_path,
            '--opset', str(opset), '--quiet']
    if os.path.exists(os.path.join(folder, 'data', 'input_0.pb')):  # else forward() takes none
        argv += ['--inputs', os.path.join(folder, 'data'), '--input-names'] + \
            ['input_%d' % i for i in range(len(fx['inputs']))]
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return 'other', 'export timed out'
    if p.returncode == 0:
        return verify_model(verifier, onnx_path, os.path.join(folder, 'data'), work)
    cls = TORCHONNX_EXIT.get(p.returncode, 'other')
    if cls == 'unsupported':
        return cls, ' '.join(unsupported_ops(p.stderr)) or first_line(p.stderr)
    detail = first_line(p.stderr.replace('torchonnx: error: ', ''))
    if cls == 'other':
        detail = 'exit %d: %s' % (p.returncode, detail)
    return cls, detail


def cmd_onnx_worker(a):
    """torch.onnx.export of the fixture named on each stdin line; one JSON line each."""
    limit_memory(a.mem_gb)
    import warnings
    warnings.filterwarnings('ignore')
    import torch
    torch.set_num_threads(1)
    errors = getattr(torch.onnx, 'errors', None)
    req, ans = private_channels()
    for line in req:
        req = json.loads(line)
        try:
            m = torch.jit.load(os.path.join(req['folder'], 'model.pt'))
            xs = torch.load(os.path.join(req['folder'], 'inputs.pt'))
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                torch.onnx.export(m, tuple(xs), req['out'], opset_version=req['opset'],
                                  input_names=['input_%d' % i for i in range(len(xs))])
            rec = {'class': 'ok'}
        except Exception as e:
            msg = str(e)
            name = type(e).__name__
            if (errors and isinstance(e, getattr(errors, 'UnsupportedOperatorError', ()))) or \
                    'is not supported' in msg or 'Unsupported: ONNX export of' in msg or \
                    "Couldn't export operator" in msg:
                cls = 'unsupported'
            elif errors and isinstance(e, getattr(errors, 'CheckerError', ())):
                cls = 'invalid'
            else:
                cls = 'rejected'
            m = re.search(r"operator '?([\w:.]+)'? to ONNX", msg) or \
                re.search(r'export operator ([\w:.]+)', msg)
            detail = m.group(1) if (cls == 'unsupported' and m) else \
                '%s: %s' % (name, first_line(msg))
            rec = {'class': cls, 'detail': detail}
        ans.write(json.dumps(rec) + '\n')
        ans.flush()


def run_torch_onnx(fx, folder, opset, worker, work, verifier):
    onnx_path = os.path.join(work, 'model.onnx')
    if os.path.exists(onnx_path):
        os.remove(onnx_path)
    r = worker.ask(json.dumps({'folder': folder, 'out': onnx_path, 'opset': opset}), 90)
    if '_error' in r:
        return 'other', 'torch.onnx.export ' + r['_error']
    if r['class'] != 'ok':
        return r['class'], r.get('detail', '')
    return verify_model(verifier, onnx_path, os.path.join(folder, 'data'), work)


def cmd_run(a):
    ops, fixtures = read_manifest(a.out)
    if a.ops:
        want = set(a.ops.split(','))
        fixtures = [f for f in fixtures if f['op'] in want or f['name'] in want]
    if a.kind:
        fixtures = [f for f in fixtures if f['kind'] == a.kind]
    results_dir = os.path.join(a.out, 'results')
    os.makedirs(results_dir, exist_ok=True)
    result_path = os.path.join(results_dir, a.column + '.jsonl')
    old = {}
    if (a.ops or a.kind) and os.path.exists(result_path):  # a partial run keeps the others'
        with open(result_path) as f:
            for line in f:
                r = json.loads(line)
                old[r['id']] = r
    cli = env = None
    if a.exporter == 'torchonnx':
        env = snapshot_cli(a.cli, os.path.join(a.out, 'cli-' + a.column))
        cli = os.path.join(a.out, 'cli-' + a.column, 'torchonnx')
    start = time.time()
    lock = threading.Lock()
    todo = list(fixtures)
    results = []

    def loop(n):
        verifier = Verifier()
        worker = Worker(['nice', '-n', '10', sys.executable, os.path.abspath(__file__),
                         '_onnx_worker', '--mem-gb', str(a.mem_gb)]) \
            if a.exporter == 'torch.onnx' else None
        work = tempfile.mkdtemp(prefix='opinfo-%s-' % a.column)
        while True:
            with lock:
                if not todo:
                    break
                fx = todo.pop(0)
            folder = os.path.join(a.out, 'fixtures', fx['id'])
            if worker:
                cls, detail = run_torch_onnx(fx, folder, a.opset, worker, work, verifier)
            else:
                cls, detail = run_torchonnx(fx, folder, a.opset, env, cli, work, verifier)
            if cls == 'mismatch':
                detail = ' | '.join(l for l in detail.splitlines() if 'MISMATCH' in l)
            detail = detail.replace(work + '/', '').replace(folder + '/', '')
            with lock:
                results.append({'id': fx['id'], 'op': fx['op'], 'kind': fx['kind'],
                                'dtype': fx['dtype'], 'class': cls, 'detail': detail[:400]})
                if a.verbose or len(results) % 200 == 0:
                    print('%s: %d/%d fixtures %.0f s' % (a.column, len(results), len(fixtures),
                                                         time.time() - start), flush=True)
        verifier.stop()
        if worker:
            worker.stop()
        shutil.rmtree(work, ignore_errors=True)

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        old[r['id']] = r
    order = {fx['id']: i for i, fx in enumerate(read_manifest(a.out)[1])}
    rows = sorted((r for r in old.values() if r['id'] in order), key=lambda r: order[r['id']])
    with open(result_path, 'w') as f:
        for r in rows:
            f.write(json.dumps(r) + '\n')
    c = collections.Counter(r['class'] for r in results)
    elapsed = time.time() - start
    info_path = os.path.join(results_dir, a.column + '.info.json')
    seconds = elapsed
    if old and os.path.exists(info_path) and len(rows) > len(results):  # merged: add the time
        with open(info_path) as f:
            seconds += json.load(f).get('seconds', 0)
    with open(info_path, 'w') as f:
        json.dump({'seconds': round(seconds), 'fixtures': len(rows), 'jobs': a.jobs,
                   'opset': a.opset, 'exporter': a.exporter}, f)
    print('%s: %d fixtures in %.0f s: %s' % (a.column, len(results), elapsed,
                                             ', '.join('%s %d' % kv for kv in c.most_common())))


# ---------------------------------------------------------------------------
# ctest slice
# ---------------------------------------------------------------------------

def cmd_check(a):
    rows = read_list(a.list)
    ops, fixtures = read_manifest(a.out)
    by = {(f['op'], f['dtype'], f['sample'], f['kind']): f for f in fixtures}
    env = dict(os.environ)
    verifier = Verifier()
    work = tempfile.mkdtemp(prefix='opinfo-check-')
    failed = []
    start = time.time()
    try:
        for row in rows:
            fx = by.get(row)
            if fx is None:
                known = next((o for o in ops if o['op'] == row[0]), None)
                failed.append('%s: no such fixture (%s)' % (
                    ' '.join(map(str, row)), 'op not in op_db' if known is None else
                    'samples skipped: %s' % (json.dumps(known['skipped']) or 'none')))
                continue
            cls, detail = run_torchonnx(fx, os.path.join(a.out, 'fixtures', fx['id']),
                                        a.opset, env, a.cli, work, verifier)
            print('%-8s %s %s' % (cls, ' '.join(map(str, row)), first_line(detail)), flush=True)
            if cls != 'pass':
                failed.append('%s: %s %s' % (' '.join(map(str, row)), cls, detail))
    finally:
        verifier.stop()
        shutil.rmtree(work, ignore_errors=True)
    print('%d/%d listed OpInfo samples pass (%.0f s)' % (len(rows) - len(failed), len(rows),
                                                         time.time() - start))
    for f in failed:
        print('FAILED ' + f)
    return 1 if failed else 0


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def load_column(spec):
    label, rest = spec.split('=', 1)
    out, name = rest.rsplit(':', 1)
    ops, fixtures = read_manifest(out)
    results = {}
    path = os.path.join(out, 'results', name + '.jsonl')
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                results[r['id']] = r
    info = {}
    if os.path.exists(path.replace('.jsonl', '.info.json')):
        with open(path.replace('.jsonl', '.info.json')) as f:
            info = json.load(f)
    with open(os.path.join(out, 'info.json')) as f:
        info['torch'] = json.load(f)['torch']
    label = label.replace('{opset}', str(info.get('opset', '?')))
    per_op = collections.OrderedDict()
    for o in ops:
        per_op[o['op']] = {'total': o['fixtures'], 'pass': 0, 'classes': collections.Counter(),
                           'details': collections.Counter(), 'skipped': o['skipped'],
                           'ran': 0}
    for fx in fixtures:
        r = results.get(fx['id'])
        if r is None:
            continue
        p = per_op[fx['op']]
        p['ran'] += 1
        if r['class'] == 'pass':
            p['pass'] += 1
        else:
            p['classes'][r['class']] += 1
            p['details'][(r['class'], r['detail'])] += 1
    for p in per_op.values():  # the samples this column ran (a partial run: not all)
        p['total'] = p['ran']
    return {'label': label, 'per_op': per_op, 'info': info, 'has_results': bool(results)}


def cmd_report(a):
    cols = [load_column(s) for s in a.column]
    cols = [c for c in cols if c['has_results']]
    tonnx = [c for c in cols if 'torchonnx' in c['label']]
    tref = [c for c in cols if 'torch.onnx' in c['label']]
    all_ops = []
    for c in cols:
        for k in c['per_op']:
            if k not in all_ops:
                all_ops.append(k)

    def in_scope(c, k):
        p = c['per_op'].get(k)
        return p is not None and p['total'] > 0

    def passes_all(c, k):
        p = c['per_op'].get(k)
        return p is not None and p['total'] > 0 and p['pass'] == p['total']

    def passes_some(c, k):
        p = c['per_op'].get(k)
        return p is not None and p['pass'] > 0

    lines = []
    w = lines.append
    w('# OpInfo sweep: torchonnx and torch.onnx on PyTorch\'s operator database')
    w('')
    w('Written by `bash scripts/opinfo.sh` on %s (issue 21). Every OpInfo of '
      '`torch.testing._internal.common_methods_invocations.op_db` and its sample inputs '
      '(`op.sample_inputs(\'cpu\', dtype)`), made into a traced and, where `torch.jit.script` '
      'compiles a wrapper, a scripted `.pt` (scripts/opinfo.py), exported, run in ONNX Runtime '
      'and compared with libtorch (rtol %g, atol %g). A sample passes when the export succeeds '
      'and every output matches.' % (time.strftime('%Y-%m-%d', time.gmtime()), RTOL, ATOL))
    w('')
    for note in a.note:
        w(note)
        w('')
    w('## Columns')
    w('')
    w('| column | exporter | torch / op_db | opset | fixtures | time |')
    w('|---|---|---|---|---|---|')
    for c in cols:
        i = c['info']
        w('| %s | %s | %s | %s | %d | %s s (%s job%s) |' % (
            c['label'], i.get('exporter', ''), i['torch'], i.get('opset', ''),
            i.get('fixtures', 0), i.get('seconds', '?'), i.get('jobs', 1),
            '' if i.get('jobs', 1) == 1 else 's'))
    w('')
    w('## Totals')
    w('')
    w('| column | ops in scope | ops passing every sample | ops passing some | samples passed |'
      ' ' + ' | '.join(CLASSES[1:]) + ' |')
    w('|---|---|---|---|---|' + '---|' * (len(CLASSES) - 1))
    for c in cols:
        scope = [k for k in c['per_op'] if in_scope(c, k)]
        tot = sum(c['per_op'][k]['total'] for k in scope)
        passed = sum(c['per_op'][k]['pass'] for k in scope)
        cls = collections.Counter()
        for k in scope:
            cls.update(c['per_op'][k]['classes'])
        w('| %s | %d | %d | %d | %d / %d (%.0f%%) | %s |' % (
            c['label'], len(scope), sum(1 for k in scope if passes_all(c, k)),
            sum(1 for k in scope if passes_some(c, k)), passed, tot,
            100.0 * passed / max(1, tot), ' | '.join(str(cls[x]) for x in CLASSES[1:])))
    w('')
    w('"ops in scope": OpInfos with at least one fixture (the others are random, complex-only, or '
      'have no sample libtorch accepts with a tensor output; see "Skipped" below). Classes: '
      'mismatch (ORT\'s outputs differ), unsupported (no converter: torchonnx exit 4, '
      'torch.onnx UnsupportedOperatorError), rejected (a converter refused the node: exit 5; '
      'torch.onnx: any other export error), invalid (the checker rejected the model: exit 6), '
      'ort_error (ONNX Runtime failed to load or run it), internal (exit 1), other (another '
      'exit code, a crash or a timeout).')
    w('')
    if tonnx and tref:
        w('## Ops torch.onnx passes and torchonnx does not')
        w('')
        w('An op in this list passes every sample in a torch.onnx column of its torch version '
          'and not in the torchonnx column at opset 17 of that version.')
        w('')
        gaps = []
        for ref in tref:
            same = [c for c in tonnx if c['info']['torch'] == ref['info']['torch'] and
                    str(c['info'].get('opset')) == str(ref['info'].get('opset'))]
            for c in same:
                for k in ref['per_op']:
                    if passes_all(ref, k) and in_scope(c, k) and not passes_all(c, k):
                        p = c['per_op'][k]
                        gaps.append('- `%s` (%s: %d/%d, %s)' % (
                            k, c['label'], p['pass'], p['total'], failure_text(p)))
        w('\n'.join(gaps) if gaps else 'None.')
        w('')
    if tonnx and tref:
        w('## Ops torchonnx passes and torch.onnx does not')
        w('')
        for ref in tref:
            for c in tonnx:
                if c['info']['torch'] != ref['info']['torch'] or \
                        str(c['info'].get('opset')) != str(ref['info'].get('opset')):
                    continue
                beyond = [k for k in c['per_op'] if passes_all(c, k) and in_scope(ref, k) and
                          not passes_all(ref, k)]
                w('%s against %s (%d): %s' % (c['label'], ref['label'], len(beyond),
                                              ', '.join('`%s`' % k for k in beyond) or 'none'))
                w('')
    w('## Per op')
    w('')
    w('Samples passed / total per column; the failure is torchonnx\'s (the first torchonnx '
      'column with failures): the class and the most frequent message, for "unsupported" the '
      'ops without a converter.')
    w('')
    w('| op | ' + ' | '.join(c['label'] for c in cols) + ' | torchonnx failure |')
    w('|---|' + '---|' * len(cols) + '---|')
    for k in all_ops:
        cells = []
        for c in cols:
            p = c['per_op'].get(k)
            cells.append('–' if p is None or p['total'] == 0 else '%d/%d' % (p['pass'],
                                                                              p['total']))
        if all(x == '–' for x in cells):
            continue
        fail = ''
        for c in tonnx:
            p = c['per_op'].get(k)
            if p and p['classes']:
                fail = failure_text(p)
                break
        w('| `%s` | %s | %s |' % (k, ' | '.join(cells), fail.replace('|', '\\|')))
    w('')
    w('## Skipped')
    w('')
    w('OpInfos without a fixture in the first column\'s op_db, with the reasons their samples '
      'were skipped.')
    w('')
    if cols:
        c = cols[0]
        for k, p in c['per_op'].items():
            if p['total'] == 0:
                reasons = ', '.join('%s (%d)' % kv for kv in
                                    sorted(p['skipped'].items(), key=lambda kv: -kv[1]))
                w('- `%s`: %s' % (k, reasons or 'no sample'))
    w('')
    with open(a.out, 'w') as f:
        f.write('\n'.join(lines))
    if a.failures:
        write_failures(a.failures, tonnx)
    print('report: %s' % a.out)


def failure_text(p):
    if not p['classes']:
        return ''
    cls = p['classes'].most_common(1)[0][0]
    detail = next((d for (c, d), _ in p['details'].most_common() if c == cls), '')
    detail = re.sub(r'\s+', ' ', detail)[:160]
    return '%s: %s' % (cls, detail) if detail else cls


def write_failures(path, tonnx):
    """Failing ops per class (for the converter work): the first torchonnx column."""
    if not tonnx:
        return
    c = tonnx[0]
    by_class = collections.defaultdict(list)
    missing = collections.Counter()
    for k, p in c['per_op'].items():
        if p['total'] and p['pass'] < p['total']:
            cls = p['classes'].most_common(1)[0][0]
            by_class[cls].append((k, p))
            for (cl, d), n in p['details'].items():
                if cl == 'unsupported':
                    for o in d.split():
                        if '::' in o:
                            missing[o] += n
    with open(path, 'w') as f:
        f.write('# OpInfo sweep failures, %s (torch %s, opset %s): op, passed/total, class and '
                'message\n' % (c['label'], c['info']['torch'], c['info'].get('opset')))
        for cls in CLASSES[1:]:
            rows = by_class.get(cls, [])
            if not rows:
                continue
            f.write('\n## %s (%d ops)\n' % (cls, len(rows)))
            for k, p in rows:
                f.write('%s\t%d/%d\t%s\n' % (k, p['pass'], p['total'], failure_text(p)))
        f.write('\n## aten ops without a converter, by failing samples\n')
        for o, n in missing.most_common():
            f.write('%s\t%d\n' % (o, n))


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('fixtures')
    p.add_argument('out')
    p.add_argument('--ops', default='')
    p.add_argument('--ops-file', default='')
    p.add_argument('--cap', type=int, default=2)
    p.add_argument('--cap-other', type=int, default=1)
    p.add_argument('--script-cap', type=int, default=1)
    p.add_argument('--timeout', type=float, default=120)
    p.add_argument('--jobs', type=int, default=1)
    p.add_argument('--nice', type=int, default=10)
    p.add_argument('--mem-gb', type=int, default=8)
    p.add_argument('--verbose', action='store_true')
    p = sub.add_parser('_fixture_worker')
    p.add_argument('--out', required=True)
    p.add_argument('--cap', type=int, required=True)
    p.add_argument('--cap-other', type=int, required=True)
    p.add_argument('--script-cap', type=int, required=True)
    p.add_argument('--mem-gb', type=int, default=8)
    p = sub.add_parser('_onnx_worker')
    p.add_argument('--mem-gb', type=int, default=8)
    p = sub.add_parser('run')
    p.add_argument('out')
    p.add_argument('--exporter', choices=['torchonnx', 'torch.onnx'], required=True)
    p.add_argument('--column', required=True)
    p.add_argument('--cli', default=os.path.join(ROOT, 'build', 'torchonnx'))
    p.add_argument('--opset', type=int, default=17)
    p.add_argument('--jobs', type=int, default=1)
    p.add_argument('--ops', default='')
    p.add_argument('--kind', default='')
    p.add_argument('--mem-gb', type=int, default=8)
    p.add_argument('--verbose', action='store_true')
    p = sub.add_parser('check')
    p.add_argument('out')
    p.add_argument('--list', required=True)
    p.add_argument('--cli', required=True)
    p.add_argument('--opset', type=int, default=17)
    p = sub.add_parser('report')
    p.add_argument('--column', action='append', default=[],
                   help='LABEL=FIXTURE_DIR:RESULT_NAME (repeat; torchonnx columns have '
                        '"torchonnx" in LABEL, torch.onnx ones "torch.onnx")')
    p.add_argument('--out', default=os.path.join(ROOT, 'docs', 'opinfo.md'))
    p.add_argument('--failures', default='')
    p.add_argument('--note', action='append', default=[], help='a paragraph for the top')
    a = ap.parse_args()
    if a.cmd == 'fixtures':
        return cmd_fixtures(a)
    if a.cmd == '_fixture_worker':
        return cmd_fixture_worker(a)
    if a.cmd == '_onnx_worker':
        return cmd_onnx_worker(a)
    if a.cmd == 'run':
        return cmd_run(a)
    if a.cmd == 'check':
        return cmd_check(a)
    if a.cmd == 'report':
        return cmd_report(a)


if __name__ == '__main__':
    sys.exit(main() or 0)
