#!/usr/bin/python3
"""Fuzz torchonnx's scripted-graph path with random TorchScript programs.

Usage:
  /usr/bin/python3 scripts/fuzz_scripted.py --minutes 15 --seed 1 --out /tmp/fuzz-out
      [--opsets 11,13,15,16,17] [--keep-ok] [--max-programs N] [--allow-input-mutation]
      [--cli build/torchonnx] [--verify tools/verify/verify.mjs] [--cap 20]
      [--show N]   (print N generated programs and exit, for looking at the grammar)

Each program is the Python source of an nn.Module drawn from a small typed grammar
(tensor ops whose shapes fit, for/while loops with constant and size-derived trip counts,
ifs on tensor and int conditions, List[Tensor] built by append, tuples, Optional[Tensor],
ints/floats/bools, helper methods and free functions, parameters and nn.Linear). It is
scripted and run in Python on three input sets (INPUT_SETS: randn, rand, randn x 4, which take
other branches and trip counts where they depend on values), in a worker process whose address
space is limited (--mem-gb) and whose run is timed (--prepare-timeout); libtorch's outputs on
each are written as test data (ref_0..2, by the torchonnx package's write_test_data). Programs
that fail to script or run, or exceed those limits, are discarded and counted. The others are
saved with torch.jit.save and exported with `torchonnx export M.pt --input SHAPE ... --opset K
--save-test-data D --quiet` (under nice, 60 s timeout); exported models are run in ONNX Runtime
(tools/verify/verify.mjs) against libtorch's outputs on the CLI's example and on the three sets,
at the converter tests' tolerance (rtol 1e-3, atol max(1e-7, 1e-5 x the output's scale)).

Classes: ok, mismatch, ort_error, internal (exit 1), crash (signal/abort/timeout),
invalid_onnx (exit 6), refused (exit 4/5, the documented refusals, grouped by normalized first
message line), forward_failed (exit 8), other (any other exit code). Every non-ok program is kept
under OUT/<class>/<n>/ (model.py, model.pt, data and ref_* folders, stderr.txt, cmd.txt; at most
20 per message group); OUT/summary.json holds the counts. Exit status: 0 when every program is
ok or refused, 1 otherwise. scripts/test.sh runs 60 programs of seed 1 on each platform.
Works with torch 1.13 and 2.x.
"""
import argparse
import collections
import importlib.util
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SERIOUS = ('internal', 'crash', 'mismatch', 'ort_error', 'invalid_onnx', 'forward_failed')


# ---------------------------------------------------------------------------
# Program generator
# ---------------------------------------------------------------------------

def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def shape_str(s):
    return '[' + ', '.join(str(d) for d in s) + ']'


class Budget(Exception):
    pass


class Gen:
    """Generates one module. Types: ('T', shape|None, 'f'|'b'), ('int', val|None), ('float',),
    ('bool',), ('list', eshape, length|None), ('tup', [types]), ('opt', shape)."""

    def __init__(self, rng, in_shapes):
        self.rng = rng
        self.in_shapes = in_shapes
        self.counter = 0
        self.params = []      # (name, shape)
        self.linears = []     # (name, in, out)
        self.helpers = []     # source blocks (methods)
        self.functions = []   # source blocks (free functions)
        self.nodes = 0

    # -- helpers -----------------------------------------------------------
    def fresh(self, p='v'):
        self.counter += 1
        return '%s%d' % (p, self.counter)

    def chance(self, p):
        return self.rng.random() < p

    def tick(self):
        self.nodes += 1
        if self.nodes > 400:
            raise Budget()

    def new_param(self, shape):
        for n, s in self.params:
            if s == shape and self.chance(0.5):
                return 'self.' + n
        n = self.fresh('p')
        self.params.append((n, shape))
        return 'self.' + n


class Body:
    """Statement/expression generation for one function body."""

    def __init__(self, g, args, has_self=True, depth_limit=3, helper_level=0):
        self.g = g
        self.rng = g.rng
        self.scopes = [dict(args)]
        self.lines = []
        self.ind = 1
        self.has_self = has_self
        self.depth_limit = depth_limit
        self.helper_level = helper_level
        self.loop_depth = 0
        self.inputs = set(n for n, _ in args)

    # -- environment -------------------------------------------------------
    def emit(self, s):
        self.lines.append('    ' * self.ind + s)

    def all_vars(self):
        out = {}
        for sc in self.scopes:
            out.update(sc)
        return out

    def lookup(self, name):
        for sc in reversed(self.scopes):
            if name in sc:
                return sc
        return None

    def define(self, name, ty):
        self.scopes[-1][name] = ty

    def set_outer(self, name, ty):
        sc = self.lookup(name)
        sc[name] = ty

    def tensors(self, shape=None, dt='f', known=True):
        r = []
        for n, t in self.all_vars().items():
            if t[0] == 'T' and t[2] == dt:
                if shape is not None:
                    if t[1] == shape:
                        r.append(n)
                elif (t[1] is not None) == known or not known:
                    r.append(n)
        return r

    def of_kind(self, kind):
        return [(n, t) for n, t in self.all_vars().items() if t[0] == kind]

    def pick(self, xs):
        return self.rng.choice(xs)

    # -- ints ----------------------------------------------------------------
    def int_expr(self, target=None, depth=0):
        """An int expression. With target, one whose value is target (for shapes)."""
        g = self.g
        g.tick()
        rng = self.rng
        opts = []
        if target is not None:
            sizes = [(n, d) for n, t in self.all_vars().items() if t[0] == 'T' and t[1]
                     for d in range(len(t[1])) if t[1][d] == target]
            ints = [n for n, t in self.of_kind('int') if t[1] == target]
            if sizes:
                opts += ['size'] * 3
            if ints:
                opts += ['int'] * 2
            if depth < 2:
                opts += ['arith']
            opts += ['lit'] * 2
            k = rng.choice(opts)
            if k == 'size':
                n, d = rng.choice(sizes)
                return rng.choice(['%s.size(%d)' % (n, d), '%s.shape[%d]' % (n, d),
                                   '%s.size(%d)' % (n, d - len(self.all_vars()[n][1]))])
            if k == 'int':
                return rng.choice(ints)
            if k == 'arith':
                src, v = self.int_expr(None, depth + 1)
                if v is not None:
                    if v != 0 and target % v == 0 and rng.random() < 0.3:
                        return '(%s * %d)' % (src, target // v)
                    if v >= target:
                        return '(%s - %d)' % (src, v - target)
                    return '(%s + %d)' % (src, target - v)
            return str(target)
        # free int: (src, value|None)
        sizes = [(n, d, t[1][d]) for n, t in self.all_vars().items() if t[0] == 'T' and t[1]
                 for d in range(len(t[1]))]
        ints = [(n, t[1]) for n, t in self.of_kind('int')]
        lists = [(n, t[2]) for n, t in self.of_kind('list')]
        opts = ['lit']
        if sizes:
            opts += ['size'] * 4
        if ints:
            opts += ['int'] * 3
        if lists:
            opts += ['len']
        if depth < 2:
            opts += ['arith'] * 2
        k = rng.choice(opts)
        if k == 'size':
            n, d, v = rng.choice(sizes)
            return rng.choice(['%s.size(%d)' % (n, d), '%s.shape[%d]' % (n, d)]), v
        if k == 'int':
            return rng.choice(ints)
        if k == 'len':
            n, L = rng.choice(lists)
            return 'len(%s)' % n, L
        if k == 'arith':
            a, va = self.int_expr(None, depth + 1)
            op = rng.choice(['+', '-', '*', '//', '%'])
            c = rng.randint(1, 3)
            if op == '+':
                return '(%s + %d)' % (a, c), None if va is None else va + c
            if op == '-':
                return '(%s - %d)' % (a, c), None if va is None else va - c
            if op == '*':
                return '(%s * %d)' % (a, c), None if va is None else va * c
            if op == '//':
                return '(%s // %d)' % (a, c), None if va is None else va // c
            return '(%s %% %d)' % (a, c), None if va is None else va % c
        v = rng.randint(0, 4)
        return str(v), v

    def small_int(self, lo=1, hi=6):
        """An int expression with a known value in [lo, hi] (a trip count, an index bound)."""
        for _ in range(6):
            s, v = self.int_expr()
            if v is not None and lo <= v <= hi:
                return s, v
        v = self.rng.randint(lo, min(hi, 4))
        return str(v), v

    # -- tensors -------------------------------------------------------------
    def rand_shape(self):
        known = [t[1] for _, t in self.all_vars().items() if t[0] == 'T' and t[1] is not None]
        if known and self.rng.random() < 0.75:
            s = list(self.pick(known))
            r = self.rng.random()
            if r < 0.15 and len(s) < 4:
                s.insert(self.rng.randint(0, len(s)), self.rng.randint(1, 4))
            elif r < 0.3 and s:
                del s[self.rng.randrange(len(s))]
            elif r < 0.4 and s:
                s[self.rng.randrange(len(s))] = self.rng.randint(1, 5)
            return tuple(s)
        return tuple(self.rng.randint(1, 5) for _ in range(self.rng.randint(0, 3)))

    def leaf(self, S):
        vs = self.tensors(S)
        if vs and self.rng.random() < 0.85:
            return self.pick(vs)
        if self.has_self and self.rng.random() < 0.8:
            known = [n for n, t in self.all_vars().items() if t[0] == 'T' and t[2] == 'f']
            if known and self.rng.random() < 0.5:
                return '(%s %s %s.%s())' % (self.g.new_param(S), self.pick(['*', '+']), self.pick(known),
                                             self.pick(['sum', 'mean', 'max']))
            return self.g.new_param(S)
        vs = self.tensors(S)
        if vs:
            return 'torch.zeros_like(%s)' % self.pick(vs) if self.rng.random() < 0.3 else self.pick(vs)
        return 'torch.full(%s, %s)' % (shape_str(S), self.pick(['0.5', '1.0', '-0.25']))

    def bool_t(self, S, d):
        g = self.g
        g.tick()
        rng = self.rng
        bs = self.tensors(S, 'b')
        k = rng.choice(['cmp', 'cmp', 'cmp2', 'var', 'not', 'and'] if d > 0 else ['cmp', 'var'])
        if k == 'var' and bs:
            return self.pick(bs)
        if k == 'cmp2':
            return '(%s %s %s)' % (self.t(S, d - 1), rng.choice(['>', '<', '>=']), self.t(S, d - 1))
        if k == 'not':
            return '(~%s)' % self.bool_t(S, d - 1)
        if k == 'and':
            return '(%s %s %s)' % (self.bool_t(S, d - 1), rng.choice(['&', '|']), self.bool_t(S, d - 1))
        return '(%s %s %s)' % (self.t(S, d - 1), rng.choice(['>', '<']),
                               rng.choice(['0.0', '0.5', '-0.5']))

    def t(self, S, d):
        """A float tensor expression of shape S."""
        g = self.g
        g.tick()
        rng = self.rng
        S = tuple(S)
        if d <= 0:
            return self.leaf(S)
        r = len(S)
        opts = ['leaf'] * 3 + ['unary'] * 3 + ['bin'] * 4 + ['scalar'] * 2 + ['where', 'boolf']
        if r >= 1:
            opts += ['matmul', 'linear', 'reduce', 'slice', 'cat', 'stack', 'select', 'expand']
        if r <= 3:
            opts += ['reduce', 'select']
        if 1 in S:
            opts += ['unsqueeze']
        if r <= 3:
            opts += ['squeeze']
        if numel(S) > 0:
            opts += ['reshape'] * 2
        if r >= 2:
            opts += ['transpose']
        if [1 for _, t in self.of_kind('list') if t[1] == S] or \
                [1 for _, t in self.of_kind('list') if t[1] and len(t[1]) == r]:
            opts += ['listuse'] * 3
        if [1 for _, t in self.of_kind('tup') if ('T', S, 'f') in t[1]]:
            opts += ['tupidx'] * 2
        if [1 for _, t in self.of_kind('opt') if t[1] == S]:
            opts += ['optsel'] * 2
        if self.helper_level < 1:
            opts += ['helper']
        if r == 0:
            opts += ['fullreduce'] * 2
        k = rng.choice(opts)
        if k == 'leaf':
            return self.leaf(S)
        if k == 'unary':
            e = self.t(S, d - 1)
            f = rng.choice(['torch.relu(%s)', 'torch.sigmoid(%s)', 'torch.tanh(%s)', '(-%s)',
                            '%s.abs()', '%s.clamp(min=-1.0, max=1.0)', 'torch.nn.functional.relu(%s)'])
            return f % e
        if k == 'bin':
            a = self.t(S, d - 1)
            if r >= 1 and rng.random() < 0.25:
                cut = rng.randint(1, r)
                bs = tuple(1 if rng.random() < 0.3 else x for x in S[cut:])
                b = self.t(bs, d - 1)
            else:
                b = self.t(S, d - 1)
            if rng.random() < 0.5:
                a, b = b, a
            return '(%s %s %s)' % (a, rng.choice(['+', '-', '*', '*', '+']), b)
        if k == 'scalar':
            e = self.t(S, d - 1)
            c = rng.random()
            if c < 0.3:
                si, _ = self.int_expr()
                return '(%s %s %s)' % (e, rng.choice(['+', '*', '-']), si)
            if c < 0.45 and self.of_kind('float'):
                return '(%s * %s)' % (e, self.pick(self.of_kind('float'))[0])
            if c < 0.6:
                return '(%s / (%s.abs() + 1.0))' % (e, self.t(S, d - 1))
            return '(%s %s %s)' % (e, rng.choice(['*', '+', '-']), rng.choice(['0.5', '2.0', '1.5']))
        if k == 'where':
            return 'torch.where(%s, %s, %s)' % (self.bool_t(S, d - 1), self.t(S, d - 1), self.t(S, d - 1))
        if k == 'boolf':
            return '%s.float()' % self.bool_t(S, d - 1)
        if k == 'matmul':
            m = rng.randint(1, 5)
            a = self.t(S[:-1] + (m,), d - 1)
            if self.has_self and rng.random() < 0.6:
                w = self.g.new_param((m, S[-1]))
            else:
                w = self.t((m, S[-1]), d - 1)
            return rng.choice(['torch.matmul(%s, %s)', '(%s @ %s)']) % (a, w)
        if k == 'linear':
            if not self.has_self:
                return self.t(S, d - 1)
            m = rng.randint(1, 5)
            a = self.t(S[:-1] + (m,), d - 1)
            n = self.g.fresh('lin')
            self.g.linears.append((n, m, S[-1]))
            return 'self.%s(%s)' % (n, a)
        if k == 'reduce':
            dd = rng.randint(0, r)
            m = rng.randint(1, 4)
            if r >= 1 and S[min(dd, r - 1)] == 1 and rng.random() < 0.4:
                dd = min(dd, r - 1)
                T = S[:dd] + (m,) + S[dd + 1:]
                return '%s.%s(%d, keepdim=True)' % (self.t(T, d - 1), rng.choice(['sum', 'mean']), dd)
            T = S[:dd] + (m,) + S[dd:]
            e = self.t(T, d - 1)
            dim = dd if rng.random() < 0.8 else dd - len(T)
            return rng.choice(['%s.sum(%d)', '%s.mean(%d)', 'torch.sum(%s, dim=%d)',
                               'torch.max(%s, %d)[0]', '%s.amax(%d)']) % (e, dim)
        if k == 'fullreduce':
            src = [n for n, t in self.all_vars().items() if t[0] == 'T' and t[2] == 'f']
            e = self.pick(src) if src and rng.random() < 0.7 else self.t(self.rand_shape(), d - 1)
            return rng.choice(['%s.sum()', '%s.mean()', 'torch.sum(%s)', '%s.max()']) % e
        if k == 'unsqueeze':
            dd = self.pick([i for i in range(r) if S[i] == 1])
            T = S[:dd] + S[dd + 1:]
            return '%s.unsqueeze(%d)' % (self.t(T, d - 1), dd if rng.random() < 0.8 else dd - r)
        if k == 'squeeze':
            dd = rng.randint(0, r)
            T = S[:dd] + (1,) + S[dd:]
            return '%s.squeeze(%d)' % (self.t(T, d - 1), dd)
        if k == 'reshape':
            n = numel(S)
            srcs = [v for v, t in self.all_vars().items() if t[0] == 'T' and t[2] == 'f' and t[1] is not None
                    and numel(t[1]) == n and t[1] != S]
            if srcs and rng.random() < 0.7:
                e = self.pick(srcs)
            else:
                T = list(S)
                if r >= 2 and rng.random() < 0.5:
                    i = rng.randrange(r - 1)
                    T[i:i + 2] = [T[i] * T[i + 1]]
                elif n > 1:
                    T = [n]
                e = self.t(tuple(T), d - 1)
            if r == 0:
                return '%s.reshape([])' % e if rng.random() < 0.5 else '%s.sum()' % e.join(['(', '.reshape(-1))'])
            dims = []
            neg = rng.randrange(r) if rng.random() < 0.6 else -1
            for i, x in enumerate(S):
                if i == neg:
                    dims.append('-1')
                elif rng.random() < 0.4:
                    dims.append(self.int_expr(x))
                else:
                    dims.append(str(x))
            meth = rng.choice(['reshape', 'reshape', 'view'])
            if meth == 'view':
                e = '%s.contiguous()' % e
            if rng.random() < 0.5:
                return '%s.%s(%s)' % (e, meth, ', '.join(dims))
            return '%s.%s([%s])' % (e, meth, ', '.join(dims))
        if k == 'slice':
            dd = rng.randrange(r)
            extra = rng.randint(1, 3)
            start = rng.randint(0, extra)
            T = S[:dd] + (S[dd] + extra,) + S[dd + 1:]
            e = self.t(T, d - 1)
            if start == 0 and rng.random() < 0.6:
                sl = ':%s' % self.int_expr(S[dd])
            elif rng.random() < 0.5:
                sl = '%d:%s' % (start, self.int_expr(start + S[dd]))
            else:
                sl = '%d:%d' % (start, start + S[dd])
            c = rng.random()
            if c < 0.2:
                return '%s.narrow(%d, %d, %s)' % (e, dd, start, self.int_expr(S[dd]))
            if dd == r - 1 and c < 0.5:
                return '%s[..., %s]' % (e, sl)
            return '%s[%s]' % (e, ', '.join([':'] * dd + [sl]))
        if k == 'cat':
            dd = rng.randrange(r)
            lists = [n for n, t in self.of_kind('list') if t[2] and t[1] and len(t[1]) == r and
                     all(t[1][i] == S[i] for i in range(r) if i != dd) and t[1][dd] * t[2] == S[dd]]
            if lists:
                return rng.choice(['torch.cat(%s, %d)', 'torch.cat(%s, dim=%d)']) % (self.pick(lists), dd)
            if S[dd] < 2:
                return self.t(S, d - 1)
            a = rng.randint(1, S[dd] - 1)
            A = S[:dd] + (a,) + S[dd + 1:]
            B = S[:dd] + (S[dd] - a,) + S[dd + 1:]
            return 'torch.cat([%s, %s], %d)' % (self.t(A, d - 1), self.t(B, d - 1), dd)
        if k == 'stack':
            dd = rng.randrange(r)
            T = S[:dd] + S[dd + 1:]
            lists = [n for n, t in self.of_kind('list') if t[1] == T and t[2] == S[dd]]
            if lists:
                return 'torch.stack(%s, %d)' % (self.pick(lists), dd)
            if S[dd] > 3:
                return self.t(S, d - 1)
            return 'torch.stack([%s], %d)' % (', '.join(self.t(T, d - 1) for _ in range(S[dd])), dd)
        if k == 'select':
            m = rng.randint(1, 4)
            dd = rng.randint(0, r)
            T = S[:dd] + (m,) + S[dd:]
            e = self.t(T, d - 1)
            i = rng.randrange(m)
            ie = self.int_expr(i) if rng.random() < 0.5 else str(i)
            if dd == 0 and rng.random() < 0.6:
                return '%s[%s]' % (e, ie)
            return '%s.select(%d, %s)' % (e, dd, ie)
        if k == 'expand':
            T = tuple(1 if rng.random() < 0.5 else x for x in S)
            e = self.t(T, d - 1)
            if rng.random() < 0.5:
                return '%s.expand(%s)' % (e, ', '.join(str(x) for x in S))
            vs = self.tensors(S)
            if vs:
                return '%s.expand_as(%s)' % (e, self.pick(vs))
            return '%s.expand(%s)' % (e, shape_str(S))
        if k == 'transpose':
            a, b = rng.sample(range(r), 2)
            T = list(S)
            T[a], T[b] = T[b], T[a]
            e = self.t(tuple(T), d - 1)
            if r == 2 and rng.random() < 0.3:
                return '%s.t()' % e
            if rng.random() < 0.3:
                perm = list(range(r))
                perm[a], perm[b] = perm[b], perm[a]
                return '%s.permute(%s)' % (e, ', '.join(map(str, perm)))
            return '%s.transpose(%d, %d)' % (e, a, b)
        if k == 'listuse':
            same = [(n, t) for n, t in self.of_kind('list') if t[1] == S]
            if same:
                n, t = self.pick(same)
                if t[2]:
                    i = rng.randrange(t[2])
                    return rng.choice(['%s[%d]' % (n, i), '%s[-1]' % n, '%s[%s]' % (n, self.int_expr(i))])
                return '%s[0]' % n if t[2] else self.t(S, d - 1)
            return self.t(S, d - 1)
        if k == 'tupidx':
            ts = [(n, t) for n, t in self.of_kind('tup') if ('T', S, 'f') in t[1]]
            n, t = self.pick(ts)
            return '%s[%d]' % (n, t[1].index(('T', S, 'f')))
        if k == 'optsel':
            n = self.pick([n for n, t in self.of_kind('opt') if t[1] == S])
            return '(%s if %s is not None else %s)' % (n, n, self.t(S, d - 1))
        if k == 'helper':
            return self.helper_call(S, d)
        return self.leaf(S)

    # -- helpers (methods and free functions) --------------------------------
    def helper_call(self, S, d):
        g = self.g
        rng = self.rng
        A = self.rand_shape() if rng.random() < 0.5 else S
        kind = rng.choice(['plain', 'plain', 'opt', 'tuple'])
        free = rng.random() < 0.3 or not self.has_self
        name = g.fresh('f' if free else 'h')
        args = [('a', ('T', A, 'f')), ('k', ('int', None))]
        sig = 'a: torch.Tensor, k: int'
        if kind == 'opt':
            args.append(('b', ('opt', A)))
            sig += ', b: Optional[torch.Tensor]'
        body = Body(g, args, has_self=not free, depth_limit=1, helper_level=self.helper_level + 1)
        body.ind = 1
        for _ in range(rng.randint(0, 2)):
            body.stmt(0)
        if kind == 'opt':
            body.emit('if b is not None:')
            body.ind += 1
            body.scopes.append({'b': ('T', A, 'f')})
            body.emit('a = %s' % body.t(A, 2))
            body.scopes.pop()
            body.ind -= 1
        if kind == 'tuple':
            S2 = body.rand_shape()
            body.emit('return %s, %s' % (body.t(S, 2), body.t(S2, 1)))
            ret = 'Tuple[torch.Tensor, torch.Tensor]'
        else:
            body.emit('return %s' % body.t(S, 2))
            ret = 'torch.Tensor'
        head = 'def %s(%s%s) -> %s:' % (name, '' if free else 'self, ', sig, ret)
        block = [head] + body.lines
        if free:
            g.functions.append('\n'.join(block))
        else:
            g.helpers.append('\n'.join('    ' + l for l in block))
        call = '%s%s(%s, %s' % ('' if free else 'self.', name, self.t(A, d - 1), self.int_expr()[0])
        if kind == 'opt':
            opts = [n for n, t in self.of_kind('opt') if t[1] == A]
            c = rng.random()
            if c < 0.3:
                call += ', None'
            elif c < 0.6 and opts:
                call += ', ' + self.pick(opts)
            else:
                call += ', ' + self.t(A, d - 1)
        call += ')'
        if kind == 'tuple':
            return '%s[0]' % call
        return call

    # -- statements ------------------------------------------------------------
    def cond(self, d):
        rng = self.rng
        c = rng.random()
        if c < 0.45:
            S = self.rand_shape()
            e = self.t(S, min(d, 2))
            return rng.choice(['bool(%s.sum() > 0)', 'bool(%s.mean() < 0.5)', 'bool((%s > 0.0).any())',
                               'bool(%s.max() > 0.3)']) % e, True
        if c < 0.6 and self.of_kind('bool'):
            n = self.pick(self.of_kind('bool'))[0]
            if rng.random() < 0.4:
                a, _ = self.int_expr()
                return '%s and %s > 1' % (n, a), False
            return ('not %s' % n if rng.random() < 0.3 else n), False
        if c < 0.7 and self.of_kind('opt'):
            n = self.pick(self.of_kind('opt'))[0]
            return '%s is None' % n, False
        a, _ = self.int_expr()
        b, _ = self.int_expr()
        return '%s %s %s' % (a, rng.choice(['>', '<', '==', '!=', '>=']), b), False

    def block(self, depth, n=None, loop=False):
        self.ind += 1
        self.scopes.append({})
        if n is None:
            n = self.rng.randint(1, 3)
        for _ in range(n):
            self.stmt(depth)
        self.scopes.pop()
        self.ind -= 1

    def outer_tensors(self):
        """Tensor variables defined outside the current innermost scope (loop-carried candidates)."""
        out = []
        for sc in self.scopes[:-1]:
            for n, t in sc.items():
                if t[0] == 'T' and t[2] == 'f' and t[1] is not None:
                    out.append((n, t))
        return out

    def invalidate_ints(self, names=None):
        for sc in self.scopes:
            for n, t in list(sc.items()):
                if t[0] == 'int' and (names is None or n in names):
                    sc[n] = ('int', None)

    def stmt(self, depth):
        g = self.g
        rng = self.rng
        g.tick()
        d = rng.randint(1, 3)
        nested = depth < self.depth_limit
        opts = ['assign'] * 5 + ['int'] * 2 + ['float', 'bool', 'tuple', 'tupunpack']
        if self.outer_tensors():
            opts += ['update'] * 4
        if nested:
            opts += ['for'] * 3 + ['while', 'if'] * 2 + ['if', 'listbuild'] * 2 + ['optional'] * 2
        if self.of_kind('list'):
            opts += ['listiter', 'listappend']
        if self.of_kind('opt'):
            opts += ['optuse'] * 2
        if self.loop_depth and nested:
            opts += ['brk']
        k = rng.choice(opts)
        if k == 'assign':
            S = self.rand_shape()
            n = g.fresh('v')
            if rng.random() < 0.15:
                self.emit('%s = %s' % (n, self.bool_t(S, d)))
                self.define(n, ('T', S, 'b'))
            else:
                self.emit('%s = %s' % (n, self.t(S, d)))
                self.define(n, ('T', S, 'f'))
        elif k == 'update':
            n, t = self.pick(self.outer_tensors())
            if n in self.inputs and rng.random() < 0.5:
                return self.stmt(depth)
            e = self.t(t[1], d)
            c = rng.random()
            if c < 0.5:
                self.emit('%s = %s %s %s' % (n, n, rng.choice(['+', '*', '-']), e))
            elif c < 0.6 and n not in self.inputs:
                self.emit('%s %s= %s' % (n, rng.choice(['+', '*', '-']), e))
            else:
                self.emit('%s = %s' % (n, e))
        elif k == 'int':
            n = g.fresh('n')
            s, v = self.int_expr()
            self.emit('%s = %s' % (n, s))
            self.define(n, ('int', v))
        elif k == 'float':
            n = g.fresh('s')
            c = rng.random()
            if c < 0.5:
                self.emit('%s = float(%s.sum())' % (n, self.t(self.rand_shape(), 1)))
            elif c < 0.75:
                self.emit('%s = %s.mean().item()' % (n, self.t(self.rand_shape(), 1)))
            else:
                self.emit('%s = %s * 0.5' % (n, self.int_expr()[0]))
            self.define(n, ('float',))
        elif k == 'bool':
            n = g.fresh('b')
            c, _ = self.cond(1)
            self.emit('%s = %s' % (n, c))
            self.define(n, ('bool',))
        elif k == 'tuple':
            n = g.fresh('t')
            S1, S2 = self.rand_shape(), self.rand_shape()
            if rng.random() < 0.3:
                s, v = self.int_expr()
                self.emit('%s = (%s, %s)' % (n, self.t(S1, d), s))
                self.define(n, ('tup', [('T', S1, 'f'), ('int', v)]))
            else:
                self.emit('%s = (%s, %s)' % (n, self.t(S1, d), self.t(S2, d)))
                self.define(n, ('tup', [('T', S1, 'f'), ('T', S2, 'f')]))
        elif k == 'tupunpack':
            tups = self.of_kind('tup')
            a, b = g.fresh('v'), g.fresh('v')
            if tups and rng.random() < 0.6:
                n, t = self.pick(tups)
                self.emit('%s, %s = %s' % (a, b, n))
                self.define(a, t[1][0])
                self.define(b, t[1][1])
            else:
                S1, S2 = self.rand_shape(), self.rand_shape()
                self.emit('%s, %s = %s, %s' % (a, b, self.t(S1, d), self.t(S2, d)))
                self.define(a, ('T', S1, 'f'))
                self.define(b, ('T', S2, 'f'))
        elif k == 'for' or k == 'while':
            c = rng.random()
            if c < 0.4:
                K = rng.randint(1, 4)
                ks = str(K)
            else:
                ks, K = self.small_int(0 if rng.random() < 0.2 else 1, 5)
            i = g.fresh('i')
            if k == 'for':
                self.emit('for %s in range(%s):' % (i, ks))
            else:
                self.emit('%s = 0' % i)
                self.define(i, ('int', None))
                self.emit('while %s < %s:' % (i, ks))
            self.loop_depth += 1
            self.ind += 1
            self.scopes.append({i: ('int', None)})
            if k == 'while':
                # first, so that a `continue` in the body cannot make the loop endless
                self.emit('%s += 1' % i)
            for _ in range(rng.randint(1, 3)):
                self.stmt(depth + 1)
            self.scopes.pop()
            self.ind -= 1
            self.loop_depth -= 1
            self.invalidate_ints()
            self.fix_lists()
        elif k == 'if':
            c, _ = self.cond(d)
            self.emit('if %s:' % c)
            self.block(depth + 1)
            if rng.random() < 0.6:
                self.emit('else:')
                self.block(depth + 1)
            self.invalidate_ints()
            self.fix_lists()
        elif k == 'listbuild':
            n = g.fresh('ls')
            S = self.rand_shape()
            if rng.random() < 0.25:
                L = rng.randint(1, 3)
                self.emit('%s = [%s]' % (n, ', '.join(self.t(S, d) for _ in range(L))))
                self.define(n, ('list', S, L))
                return
            self.emit('%s: List[torch.Tensor] = []' % n)
            self.define(n, ('list', S, 0))
            if rng.random() < 0.4:
                K = rng.randint(1, 4)
                ks = str(K)
            else:
                ks, K = self.small_int(1, 5)
            i = g.fresh('i')
            self.emit('for %s in range(%s):' % (i, ks))
            self.ind += 1
            self.scopes.append({i: ('int', None)})
            self.loop_depth += 1
            if rng.random() < 0.3:
                self.stmt(depth + 1)
            e = self.t(S, d)
            if rng.random() < 0.3:
                e = '(%s * %s)' % (e, i)
            self.emit('%s.append(%s)' % (n, e))
            self.loop_depth -= 1
            self.scopes.pop()
            self.ind -= 1
            self.invalidate_ints()
            self.fix_lists()
            self.set_outer(n, ('list', S, None if n in self.dirty_lists else K))
        elif k == 'listappend':
            n, t = self.pick(self.of_kind('list'))
            self.emit('%s.append(%s)' % (n, self.t(t[1], d)))
            if len(self.scopes) > 1 and self.lookup(n) is not self.scopes[-1]:
                self.set_outer(n, ('list', t[1], None))  # conditional or in a loop: unknown length
                self.dirty_lists.add(n)
            else:
                self.set_outer(n, ('list', t[1], None if t[2] is None else t[2] + 1))
        elif k == 'listiter':
            n, t = self.pick(self.of_kind('list'))
            acc = g.fresh('acc')
            self.emit('%s = %s' % (acc, self.t(t[1], 1)))
            self.define(acc, ('T', t[1], 'f'))
            x = g.fresh('e')
            if rng.random() < 0.3:
                j = g.fresh('j')
                self.emit('for %s, %s in enumerate(%s):' % (j, x, n))
                self.scopes.append({x: ('T', t[1], 'f'), j: ('int', None)})
            else:
                self.emit('for %s in %s:' % (x, n))
                self.scopes.append({x: ('T', t[1], 'f')})
            self.ind += 1
            self.loop_depth += 1
            self.emit('%s = %s + %s' % (acc, acc, self.t(t[1], 1)))
            self.loop_depth -= 1
            self.ind -= 1
            self.scopes.pop()
            self.invalidate_ints()
        elif k == 'optional':
            n = g.fresh('o')
            S = self.rand_shape()
            self.emit('%s: Optional[torch.Tensor] = None' % n)
            self.define(n, ('opt', S))
            c = rng.random()
            if c < 0.5:
                cc, _ = self.cond(d)
                self.emit('if %s:' % cc)
            else:
                ks, K = self.small_int(0, 4)
                self.emit('for %s in range(%s):' % (g.fresh('i'), ks))
            self.ind += 1
            if rng.random() < 0.4:
                self.emit('%s = %s' % (n, self.t(S, d)))
            else:
                self.emit('%s = %s' % (n, self.t(S, 1)))
            self.ind -= 1
        elif k == 'optuse':
            n, t = self.pick(self.of_kind('opt'))
            S = t[1]
            outs = [v for v, tt in self.all_vars().items() if tt == ('T', S, 'f') and v not in self.inputs]
            if rng.random() < 0.5 or not outs:
                v = g.fresh('v')
                self.emit('%s = %s' % (v, self.t(S, 1)))
                self.define(v, ('T', S, 'f'))
            else:
                v = self.pick(outs)
            self.emit('if %s is not None:' % n)
            self.ind += 1
            self.scopes.append({n: ('T', S, 'f')})
            self.emit('%s = %s + %s' % (v, v, self.t(S, 1) if rng.random() < 0.4 else n))
            self.scopes.pop()
            self.ind -= 1
            if rng.random() < 0.4:
                self.emit('else:')
                self.ind += 1
                self.emit('%s = %s * 2.0' % (v, v))
                self.ind -= 1
        elif k == 'brk':
            a, _ = self.int_expr()
            self.emit('if %s %s %d:' % (a, rng.choice(['>', '==']), rng.randint(1, 3)))
            self.ind += 1
            self.emit(rng.choice(['break', 'continue']))
            self.ind -= 1

    dirty_lists = set()

    def fix_lists(self):
        """After a loop or an if, lists appended inside have unknown length."""
        for sc in self.scopes:
            for n, t in list(sc.items()):
                if t[0] == 'list' and n in self.dirty_lists:
                    sc[n] = ('list', t[1], None)


def gen_program(rng, n_inputs=None):
    if n_inputs is None:
        n_inputs = 1 if rng.random() < 0.6 else 2
    in_shapes = []
    for _ in range(n_inputs):
        if in_shapes and rng.random() < 0.4:
            in_shapes.append(in_shapes[0])
        else:
            in_shapes.append(tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 4))))
    g = Gen(rng, in_shapes)
    args = [('x%d' % i, ('T', s, 'f')) for i, s in enumerate(in_shapes)]
    body = Body(g, args, depth_limit=rng.choice([2, 2, 3]))
    body.ind = 2
    body.dirty_lists = set()
    for _ in range(rng.randint(2, 7)):
        body.stmt(0)
    # outputs: recently defined tensors
    cands = [(n, t) for n, t in body.scopes[0].items() if t[0] == 'T' and t[1] is not None]
    rng.shuffle(cands)
    cands.sort(key=lambda nt: 0 if nt[0] in body.inputs else 1, reverse=True)
    outs = []
    for n, t in cands[:rng.randint(1, 3)]:
        outs.append('%s.float()' % n if t[2] == 'b' else n)
    if not outs or all(o in body.inputs for o in outs):
        outs.append(body.t(body.rand_shape(), 2))
    if len(outs) == 1 and rng.random() < 0.8:
        body.emit('return %s' % outs[0])
    else:
        body.emit('return (%s)' % (', '.join(outs) + (',' if len(outs) == 1 else '')))
    src = ['import torch', 'import torch.nn as nn', 'from typing import List, Tuple, Optional', '', '']
    for f in g.functions:
        src += [f, '', '']
    src += ['class M(nn.Module):', '    def __init__(self):', '        super().__init__()']
    for n, s in g.params:
        src.append('        self.%s = nn.Parameter(torch.randn(%s))' % (n, shape_str(s)))
    for n, a, b in g.linears:
        src.append('        self.%s = nn.Linear(%d, %d)' % (n, a, b))
    src.append('')
    for h in g.helpers:
        src += [h, '']
    src.append('    def forward(self, %s):' % ', '.join('%s: torch.Tensor' % n for n, _ in args))
    src += body.lines
    return '\n'.join(src) + '\n', in_shapes


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

def normalize(msg):
    m = msg.strip()
    m = re.sub(r'\(?code/__torch__/[^\s:)]*(:\d+)?\)?', '(…)', m)
    m = re.sub(r'/tmp/\S*', '…', m)
    m = re.sub(r"(?<![A-Za-z])'[^']*'", "'…'", m)
    m = re.sub(r'"[^"]*"', '"…"', m)
    m = re.sub(r'%[\w.]+', '%…', m)
    m = re.sub(r'\b\d+\b', 'N', m)
    m = re.sub(r'\[[^\]]*\]', '[…]', m)
    m = re.sub(r'\s+', ' ', m)
    return m[:200]


def first_message(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if re.search(r'error|unsupported|cannot|not supported|refus|reject|fail', l, re.I):
            return l.strip()
    return lines[0].strip() if lines else '(no message)'


# The converter tests' tolerance (tests/support/harness.h Tolerance): |ort - torch| <=
# max(ATOL, ATOL_SCALE * scale) + RTOL * |torch|, scale = max |torch| capped at 10x the median.
RTOL, ATOL, ATOL_SCALE = 1e-3, 1e-7, 1e-5


class Verifier:
    def __init__(self, script):
        self.script = script
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(['nice', '-n', '10', 'node', self.script, '--serve'],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def stop(self):
        if self.proc:
            try:
                self.proc.stdin.close()
                self.proc.wait(5)
            except Exception:
                self.proc.kill()
            self.proc = None

    def cli(self, model, data):
        try:
            p = subprocess.run(['nice', '-n', '10', 'node', self.script, model, data,
                                '--rtol', str(RTOL), '--atol', str(ATOL),
                                '--atol-scale', str(ATOL_SCALE)],
                               capture_output=True, text=True, timeout=120)
            return p.returncode, (p.stdout + p.stderr).strip()
        except subprocess.TimeoutExpired:
            return 2, 'verify timed out'

    def verify(self, model, data):
        """(code, report): 0 match, 1 mismatch, 2 load/run error."""
        for _ in range(2):
            if self.proc is None or self.proc.poll() is not None:
                self.start()
            try:
                self.proc.stdin.write(json.dumps({'model': model, 'data': data, 'rtol': RTOL,
                                                  'atol': ATOL, 'atol_scale': ATOL_SCALE}) + '\n')
                self.proc.stdin.flush()
                r, _, _ = select.select([self.proc.stdout], [], [], 120)
                if not r:
                    raise RuntimeError('timeout')
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError('server died')
                resp = json.loads(line)
                if resp['ok']:
                    return 0, resp['report']
                rep = resp['report']
                if any(l.startswith('error: ') for l in rep.splitlines()):
                    return 2, rep
                return 1, rep
            except Exception:
                if self.proc:
                    self.proc.kill()
                    self.proc = None
                # the server died or hung on this model: the plain CLI tells what happens
                return self.cli(model, data)
        return self.cli(model, data)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# The input sets libtorch's references are computed on (Python side, besides the CLI's own
# --save-test-data example): values of other signs and magnitudes take other branches of ifs on
# tensor values and other trip counts of while loops on them.
INPUT_SETS = (
    ('randn', lambda torch, s: torch.randn(*s) if s else torch.randn(())),
    ('rand', lambda torch, s: torch.rand(*s) if s else torch.rand(())),
    ('randn_x4', lambda torch, s: (torch.randn(*s) if s else torch.randn(())) * 4),
)


def flat_outputs(out):
    """The forward's outputs as the export flattens them (a tensor or a tuple of tensors)."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def prepare(task, torch, write_test_data):
    """Scripts, runs (on INPUT_SETS) and saves one program, with libtorch's outputs on each input
    set as test data (PDIR/ref_K/input_*.pb, output_*.pb); returns None or (stage, message) when
    it is discarded."""
    py, pt, seed, in_shapes, modname, allow_mutation = task
    stage = 'import'
    try:
        mod = load_module(py, modname)
        torch.manual_seed(seed)
        m = mod.M().eval()
        stage = 'script'
        sm = torch.jit.script(m)
        stage = 'run'
        refs = []
        with torch.no_grad():
            for _, gen in INPUT_SETS:
                ins = [gen(torch, s) for s in in_shapes]
                before = [i.clone() for i in ins]
                outs = flat_outputs(sm(*ins))
                if not allow_mutation and any(not torch.equal(a, b) for a, b in zip(ins, before)):
                    raise RuntimeError('mutates its inputs')
                refs.append((before, [o.detach().clone() for o in outs]))
        torch.jit.save(sm, pt)
        for k, (ins, outs) in enumerate(refs):
            write_test_data(os.path.join(os.path.dirname(pt), 'ref_%d' % k), ins, outs)
        return None
    except Exception as e:
        msg = str(e).strip().splitlines()
        return stage, (msg[0] if msg else type(e).__name__)
    finally:
        sys.modules.pop(modname, None)


def worker_main(conn, mem_bytes, package_dir):
    """The child process that prepares programs (Preparer): its address space is limited, so a
    program that allocates without bound fails there (a discard) instead of taking the machine.
    Test data is written by the torchonnx package's write_test_data (TensorProto files)."""
    import resource
    if mem_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, package_dir)
    import torchonnx
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        conn.send(prepare(task, torch, torchonnx._C.write_test_data))


class Preparer:
    """Runs prepare() in a worker process with a memory limit and a timeout; a worker that dies
    or hangs is replaced, and its program discarded."""

    def __init__(self, mem_gb, timeout, package_dir):
        import multiprocessing
        self.ctx = multiprocessing.get_context('spawn')
        self.package_dir = package_dir
        self.mem = int(mem_gb * (1 << 30))
        self.timeout = timeout
        self.proc = None
        self.conn = None

    def start(self):
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=worker_main, args=(child, self.mem, self.package_dir),
                                     daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def stop(self):
        if self.proc is not None:
            self.conn.close()
            self.proc.kill()
            self.proc.join()
            self.proc = None

    def run(self, task):
        if self.proc is None or not self.proc.is_alive():
            self.start()
        try:
            self.conn.send(task)
            if self.conn.poll(self.timeout):
                return self.conn.recv()
            result = ('run', 'timed out after %d s' % self.timeout)
        except (EOFError, OSError):
            result = ('run', 'worker died (out of memory?)')
        self.stop()
        return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--minutes', type=float, default=15)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--out', default='/tmp/fuzz-scripted')
    ap.add_argument('--opsets', default='11,13,15,16,17')
    ap.add_argument('--keep-ok', action='store_true')
    ap.add_argument('--max-programs', type=int, default=0)
    ap.add_argument('--cli', default=os.path.join(ROOT, 'build', 'torchonnx'))
    ap.add_argument('--verify', default=os.path.join(ROOT, 'tools', 'verify', 'verify.mjs'))
    ap.add_argument('--cap', type=int, default=20, help='programs kept per message group')
    ap.add_argument('--python-package', default='',
                    help="the folder holding the torchonnx package (default: the CLI's "
                         "folder's python/), whose write_test_data writes the references")
    ap.add_argument('--allow-input-mutation', action='store_true',
                    help='keep programs that modify their inputs in place (--save-test-data then '
                         'saves the modified inputs, a known false mismatch)')
    ap.add_argument('--show', type=int, default=0, help='print N programs and exit')
    ap.add_argument('--mem-gb', type=float, default=3,
                    help='address-space limit of the process that scripts and runs the programs')
    ap.add_argument('--prepare-timeout', type=int, default=120,
                    help='seconds one program may take to script and run')
    args = ap.parse_args()

    import torch
    opsets = [int(x) for x in args.opsets.split(',')]
    rng = random.Random(args.seed)

    if args.show:
        for _ in range(args.show):
            src, shapes = gen_program(rng)
            print('# inputs', shapes)
            print(src)
        return 0

    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix='fuzz-scripted-')
    sys.path.insert(0, work)
    verifier = Verifier(args.verify)
    package_dir = args.python_package or os.path.join(os.path.dirname(os.path.abspath(args.cli)),
                                                      'python')
    preparer = Preparer(args.mem_gb, args.prepare_timeout, package_dir)
    counts = collections.Counter()
    discards = collections.Counter()
    refused = collections.Counter()
    groups = collections.Counter()
    examples = {}
    kept_dirs = collections.defaultdict(list)
    stats = collections.Counter()
    t0 = time.time()
    deadline = t0 + args.minutes * 60
    n = 0
    try:
        while time.time() < deadline and (not args.max_programs or n < args.max_programs):
            n += 1
            stats['generated'] += 1
            pdir = os.path.join(work, 'p%d' % n)
            os.makedirs(pdir)
            try:
                src, in_shapes = gen_program(rng)
            except Budget:
                stats['too_big'] += 1
                shutil.rmtree(pdir, ignore_errors=True)
                continue
            py = os.path.join(pdir, 'model.py')
            with open(py, 'w') as f:
                f.write(src)
            pt = os.path.join(pdir, 'model.pt')
            seed = rng.randrange(1 << 30)
            modname = 'fuzzprog_%d' % n
            failed = preparer.run((py, pt, seed, in_shapes, modname, args.allow_input_mutation))
            if failed is not None:
                stage, msg = failed
                discards['%s: %s' % (stage, normalize(msg)[:100])] += 1
                stats['discarded_' + stage] += 1
                shutil.rmtree(pdir, ignore_errors=True)
                continue
            stats['scripted'] += 1
            opset = rng.choice(opsets)
            onnx = os.path.join(pdir, 'model.onnx')
            data = os.path.join(pdir, 'data')
            cmd = ['nice', '-n', '10', args.cli, 'export', pt]
            for s in in_shapes:
                cmd += ['--input', 'x'.join(map(str, s))]
            cmd += ['-o', onnx, '--opset', str(opset), '--save-test-data', data, '--quiet']
            rc, err = None, ''
            for attempt in range(20):
                if not os.path.exists(args.cli):
                    time.sleep(30)
                    continue
                try:
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                    rc, err = p.returncode, p.stderr + p.stdout
                except subprocess.TimeoutExpired as e:
                    rc, err = 'timeout', 'timed out after 60 s\n' + str(e.stderr or '')
                if rc in (126, 127):
                    time.sleep(30)
                    continue
                break
            if rc in (None, 126, 127):
                stats['cli_unavailable'] += 1
                shutil.rmtree(pdir, ignore_errors=True)
                continue
            vreport = ''
            if rc == 0:
                stats['exported'] += 1
                # The CLI's example, then libtorch's outputs on each of INPUT_SETS.
                for ref in [data] + [os.path.join(pdir, 'ref_%d' % k)
                                     for k in range(len(INPUT_SETS))]:
                    vc, vreport = verifier.verify(onnx, ref)
                    if vc:
                        vreport = '%s: %s' % (os.path.basename(ref), vreport)
                        break
                cls = {0: 'ok', 1: 'mismatch'}.get(vc, 'ort_error')
                msg = first_message(vreport.split(': ', 1)[1]) if vc else ''
            elif rc == 'timeout' or (isinstance(rc, int) and rc < 0) or rc in (134, 139):
                cls, msg = 'crash', ('timeout' if rc == 'timeout' else 'signal %s' % rc) + ': ' + \
                    first_message(err)
            else:
                cls = {1: 'internal', 4: 'refused', 5: 'refused', 6: 'invalid_onnx',
                       8: 'forward_failed'}.get(rc, 'other')
                msg = first_message(err)
                if cls == 'other':
                    msg = 'exit %s: %s' % (rc, msg)
            counts[cls] += 1
            key = normalize(msg) if cls != 'ok' else ''
            if cls == 'refused':
                refused[key] += 1
            groups[(cls, key)] += 1
            keep = cls != 'ok' or args.keep_ok
            if keep and groups[(cls, key)] <= args.cap:
                dst = os.path.join(args.out, cls, str(n))
                os.makedirs(dst, exist_ok=True)
                for fn in ('model.py', 'model.pt', 'model.onnx'):
                    if os.path.exists(os.path.join(pdir, fn)):
                        shutil.copy(os.path.join(pdir, fn), dst)
                for d in [data] + [os.path.join(pdir, 'ref_%d' % k)
                                   for k in range(len(INPUT_SETS))]:
                    if os.path.isdir(d):
                        shutil.copytree(d, os.path.join(dst, os.path.basename(d)),
                                        dirs_exist_ok=True)
                with open(os.path.join(dst, 'meta.json'), 'w') as f:
                    json.dump({'torch_seed': seed, 'inputs': in_shapes, 'opset': opset}, f)
                with open(os.path.join(dst, 'stderr.txt'), 'w') as f:
                    f.write('exit: %s\n%s\n%s' % (rc, err, vreport))
                with open(os.path.join(dst, 'cmd.txt'), 'w') as f:
                    f.write('cd %s\n%s\n' % (dst, ' '.join(c.replace(pdir + '/', '') for c in cmd[3:])))
                    if rc == 0:
                        for d in ['data'] + ['ref_%d' % k for k in range(len(INPUT_SETS))]:
                            f.write('node %s model.onnx %s --rtol %g --atol %g --atol-scale %g\n'
                                    % (args.verify, d, RTOL, ATOL, ATOL_SCALE))
                if (cls, key) not in examples:
                    examples[(cls, key)] = dst
            shutil.rmtree(pdir, ignore_errors=True)
            if n % 50 == 0:
                el = time.time() - t0
                print('[%5.0fs] generated %d scripted %d exported %d  %s' % (
                    el, stats['generated'], stats['scripted'], stats['exported'],
                    ' '.join('%s=%d' % kv for kv in sorted(counts.items()))), flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        verifier.stop()
        preparer.stop()
        shutil.rmtree(work, ignore_errors=True)
    elapsed = time.time() - t0
    summary = {
        'seed': args.seed, 'minutes': args.minutes, 'elapsed_s': round(elapsed, 1),
        'generated': stats['generated'], 'too_big': stats['too_big'],
        'discarded': {k: v for k, v in stats.items() if k.startswith('discarded_')},
        'scripted': stats['scripted'], 'exported': stats['exported'],
        'cli_unavailable': stats['cli_unavailable'],
        'classes': dict(counts),
        'refused': [{'message': k, 'count': v} for k, v in refused.most_common()],
        'groups': [{'class': c, 'message': k, 'count': v, 'example': examples.get((c, k))}
                   for (c, k), v in groups.most_common() if c != 'ok'],
        'discard_reasons': [{'reason': k, 'count': v} for k, v in discards.most_common(30)],
        'torch': torch.__version__,
    }
    with open(os.path.join(args.out, 'summary.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    print('\n== fuzz_scripted: seed %d, %.1f min' % (args.seed, elapsed / 60))
    print('generated %d (too big %d), scripted+ran %d, exported %d' % (
        stats['generated'], stats['too_big'], stats['scripted'], stats['exported']))
    print('discarded: %s' % ', '.join('%s %d' % (k[10:], v) for k, v in sorted(summary['discarded'].items())))
    for c in ('ok',) + SERIOUS + ('refused', 'other'):
        print('  %-15s %d' % (c, counts[c]))
    if refused:
        print('top refused messages:')
        for k, v in refused.most_common(10):
            print('  %5d  %s' % (v, k))
    ser = [(c, k, v) for (c, k), v in groups.most_common() if c in SERIOUS or c == 'other']
    if ser:
        print('serious / other groups:')
        for c, k, v in ser[:20]:
            print('  %-14s %4d  %s  (%s)' % (c, v, k, examples.get((c, k))))
    print('summary: %s' % os.path.join(args.out, 'summary.json'))
    return 1 if any(counts[c] for c in SERIOUS + ('other',)) else 0


if __name__ == '__main__':
    sys.exit(main())
