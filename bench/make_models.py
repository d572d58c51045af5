#!/usr/bin/python3
"""Makes the benchmark models of bench/run.sh.

Usage: /usr/bin/python3 bench/make_models.py OUT_DIR [model ...]

Needs Debian's python3-torch (1.13) and python3-torchvision (0.14), hence
/usr/bin/python3. For each model (default: all of MODELS) this writes
  OUT_DIR/<name>.pt            torch.jit.trace (eval mode, under torch.no_grad();
                               vit_b_16 with grad on, see TRACE_WITH_GRAD) of the
                               model with random weights, torch.jit.save'd
  OUT_DIR/<name>/input_0.pb    the example input, a serialized onnx.TensorProto
  OUT_DIR/<name>.json          facts about it: parameters, unique weight bytes, ...
Weights come from torch.manual_seed(0) before building, inputs from their own
seeded generator: every run makes the same files, and build(name) rebuilds the
same nn.Module (bench/torch_onnx_export.py --module uses that). Nothing is
downloaded.

A model is skipped when its three files exist and its .json carries the current
version (bump VERSION, or the model's REVISION, when a model's definition changes).

Models:
  resnet50   torchvision, input float 1x3x224x224
  vit_b_16   torchvision, input float 1x3x224x224
  bert_base  BERT-base encoder (12 layers, hidden 768, 12 heads, FFN 3072,
             vocab 30522), input int64 token ids 1x128
  gpt_355m   GPT-2-medium-like decoder (24 layers, d 1024, 16 heads, vocab
             50257, context 1024, lm_head tied to the token embedding),
             input int64 ids 1x128; 355M parameters, 1.42 GB
  gpt_700m   the same with 32 layers, d 1280, 20 heads: 695M parameters,
             2.78 GB (past protobuf's 2 GB: external data)
  gpt_tiny   the same with 2 layers, d 128, 4 heads, vocab 1000, context 256
             (bench/run.sh --quick)
  baseline   one Linear(4, 4): the exporters' memory baseline
"""

import gc
import json
import math
import os
import sys
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

VERSION = 2
INPUT_SEED = 1234
WEIGHT_SEED = 0

# ---------------------------------------------------------------------------
# onnx.TensorProto without the onnx package
# ---------------------------------------------------------------------------

# The writers are the test fixtures' (tests/fixtures/make_torchvision.py); the reader is ours.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "fixtures"))
from make_torchvision import _write_atomic, tensor_proto_bytes  # noqa: E402

TORCH_TYPES = {1: torch.float32, 7: torch.int64}


def _read_varint(buf, pos):
    shift = 0
    value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def read_tensor_proto(path):
    """Reads what tensor_proto_bytes writes (dims, data_type, raw_data) back."""
    with open(path, "rb") as f:
        buf = f.read()
    pos, dims, code, raw = 0, [], None, None
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
            if field == 1:
                dims.append(value)
            elif field == 2:
                code = value
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            chunk = buf[pos:pos + n]
            pos += n
            if field == 1:
                p = 0
                while p < len(chunk):
                    d, p = _read_varint(chunk, p)
                    dims.append(d)
            elif field == 9:
                raw = chunk
        else:
            raise ValueError("%s: unexpected wire type %d (not written by make_models.py)" %
                             (path, wire))
    if code not in TORCH_TYPES or raw is None:
        raise ValueError("%s: not a float32/int64 TensorProto with raw_data" % path)
    t = torch.frombuffer(bytearray(raw), dtype=TORCH_TYPES[code])
    return t.reshape(dims)


# ---------------------------------------------------------------------------
# BERT-base encoder
# ---------------------------------------------------------------------------


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_size = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        new_shape = x.size()[:-1] + (self.heads, self.head_size)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        scores = scores + mask
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.heads * self.head_size,))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attention_output = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        x = self.attention_norm(x + self.attention_output(self.attention(x, mask)))
        h = F.gelu(self.intermediate(x))
        return self.output_norm(x + self.output(h))


class BertEncoder(nn.Module):
    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, intermediate=3072,
                 max_positions=512, type_vocab=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(
            [BertLayer(hidden, heads, intermediate) for _ in range(layers)])
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0))
        self.register_buffer("token_type_ids", torch.zeros(1, max_positions, dtype=torch.long))

    def forward(self, input_ids):
        seq = input_ids.size(1)
        positions = self.position_ids[:, :seq]
        token_types = self.token_type_ids[:, :seq].expand_as(input_ids)
        x = (self.word_embeddings(input_ids) + self.position_embeddings(positions) +
             self.token_type_embeddings(token_types))
        x = self.embedding_norm(x)
        # Padding (id 0) is masked out: (1 - mask) * -10000 added to the attention scores.
        mask = (input_ids != 0).to(x.dtype)[:, None, None, :]
        mask = (1.0 - mask) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


# ---------------------------------------------------------------------------
# GPT-2-style decoder
# ---------------------------------------------------------------------------


class GptAttention(nn.Module):
    def __init__(self, d, heads, context):
        super().__init__()
        self.heads = heads
        self.head_size = d // heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.register_buffer(
            "bias", torch.tril(torch.ones(context, context, dtype=torch.bool)).view(
                1, 1, context, context))

    def split_heads(self, x):
        new_shape = x.size()[:-1] + (self.heads, self.head_size)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x):
        q = self.split_heads(self.q(x))
        k = self.split_heads(self.k(x))
        v = self.split_heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        n = x.size(-2)
        causal = self.bias[:, :, :n, :n]
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return self.proj(ctx.view(ctx.size()[:-2] + (self.heads * self.head_size,)))


class GptBlock(nn.Module):
    def __init__(self, d, heads, context):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = GptAttention(d, heads, context)
        self.ln_2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, layers, d, heads, vocab=50257, context=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(context, d)
        self.blocks = nn.ModuleList([GptBlock(d, heads, context) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        self.register_buffer("position_ids", torch.arange(context).unsqueeze(0))

    def forward(self, input_ids):
        positions = self.position_ids[:, :input_ids.size(1)]
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# ---------------------------------------------------------------------------
# The models
# ---------------------------------------------------------------------------


def _torchvision(name):
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


def _image_input():
    g = torch.Generator().manual_seed(INPUT_SEED)
    return torch.randn(1, 3, 224, 224, generator=g)


def _ids_input(vocab, length=128):
    g = torch.Generator().manual_seed(INPUT_SEED)
    return torch.randint(1, vocab, (1, length), generator=g)


class Baseline(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


# name -> (builder, example input, description)
MODELS = {
    "resnet50": (lambda: _torchvision("resnet50"), _image_input,
                 "torchvision resnet50, input float 1x3x224x224"),
    "vit_b_16": (lambda: _torchvision("vit_b_16"), _image_input,
                 "torchvision vit_b_16, input float 1x3x224x224"),
    "bert_base": (lambda: BertEncoder(), lambda: _ids_input(30522),
                  "BERT-base encoder: 12 layers, hidden 768, 12 heads, FFN 3072, vocab 30522; "
                  "input int64 ids 1x128"),
    "gpt_355m": (lambda: Gpt(layers=24, d=1024, heads=16), lambda: _ids_input(50257),
                 "GPT-2-medium-like decoder: 24 layers, d 1024, 16 heads, vocab 50257, context "
                 "1024, tied lm_head; input int64 ids 1x128"),
    "gpt_700m": (lambda: Gpt(layers=32, d=1280, heads=20), lambda: _ids_input(50257),
                 "GPT-style decoder: 32 layers, d 1280, 20 heads, vocab 50257, context 1024, "
                 "tied lm_head; input int64 ids 1x128"),
    "gpt_tiny": (lambda: Gpt(layers=2, d=128, heads=4, vocab=1000, context=256),
                 lambda: _ids_input(1000),
                 "GPT-style decoder: 2 layers, d 128, 4 heads, vocab 1000, context 256, tied "
                 "lm_head; input int64 ids 1x128"),
    "baseline": (lambda: Baseline(), lambda: torch.randn(1, 4, generator=torch.Generator(
        ).manual_seed(INPUT_SEED)), "one Linear(4, 4): the memory baseline; input float 1x4"),
}
FULL = ["resnet50", "vit_b_16", "bert_base", "gpt_355m", "gpt_700m"]

# Models traced with autograd on. nn.MultiheadAttention (vit_b_16's encoder) takes a fused fast
# path, aten::_native_multi_head_attention, when grad is off; torch.onnx 1.13 has no symbolic for
# it (UnsupportedOperatorError), so these are traced, and exported by torch.onnx, with
# requires_grad parameters and grad enabled: the standard ops of the slow path, as torch.onnx
# users export them.
TRACE_WITH_GRAD = {"vit_b_16"}
# Bumped per model when its .pt changes without a change of VERSION.
REVISION = {"vit_b_16": 1}


def build(name):
    """The model in eval mode with its seeded random weights (parameters without grad, except
    for TRACE_WITH_GRAD)."""
    builder = MODELS[name][0]
    torch.manual_seed(WEIGHT_SEED)
    with torch.no_grad():
        model = builder()
    for p in model.parameters():
        p.requires_grad_(name in TRACE_WITH_GRAD)
    return model.eval()


def grad_mode(name):
    """The autograd mode to trace and export `name` in (see TRACE_WITH_GRAD)."""
    return torch.enable_grad() if name in TRACE_WITH_GRAD else torch.no_grad()


def version(name):
    return "%d.%d" % (VERSION, REVISION.get(name, 0))


def example_input(name):
    return MODELS[name][1]()


def weight_facts(model):
    """Parameters and unique weight bytes (tied tensors counted once, by storage)."""
    seen = {}
    params = 0
    seen_params = set()
    for t in list(model.parameters()) + list(model.buffers()):
        key = (t.storage().data_ptr(), t.storage_offset(), tuple(t.shape))
        if key not in seen:
            seen[key] = t.numel() * t.element_size()
    for p in model.parameters():
        if p.data_ptr() not in seen_params:
            seen_params.add(p.data_ptr())
            params += p.numel()
    return {"parameters": params, "weight_bytes": sum(seen.values())}


def up_to_date(out_dir, name):
    meta = os.path.join(out_dir, name + ".json")
    if not all(os.path.exists(p) for p in (os.path.join(out_dir, name + ".pt"), meta,
                                           os.path.join(out_dir, name, "input_0.pb"))):
        return False
    try:
        with open(meta) as f:
            return json.load(f).get("version") == version(name)
    except (OSError, ValueError):
        return False


def make(name, out_dir):
    if up_to_date(out_dir, name):
        return "up to date, skipped"
    t0 = time.monotonic()
    model = build(name)
    x = example_input(name)
    facts = weight_facts(model)
    t1 = time.monotonic()
    with grad_mode(name), warnings.catch_warnings():
        # torch.tensor(finfo.min) in GptAttention is meant as a constant.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(model, x, check_trace=False)
    del model
    gc.collect()
    t2 = time.monotonic()
    os.makedirs(os.path.join(out_dir, name), exist_ok=True)
    pt = os.path.join(out_dir, name + ".pt")
    _write_atomic(pt, save=traced.save)  # torch.jit.save
    del traced
    gc.collect()
    _write_atomic(os.path.join(out_dir, name, "input_0.pb"), tensor_proto_bytes(x))
    meta = dict(facts, version=version(name), name=name, description=MODELS[name][2],
                input_shape=list(x.shape), input_dtype=str(x.dtype).replace("torch.", ""),
                pt_bytes=os.path.getsize(pt))
    _write_atomic(os.path.join(out_dir, name + ".json"),
                  (json.dumps(meta, indent=2) + "\n").encode())
    t3 = time.monotonic()
    return "%.1fs (build %.1fs, trace %.1fs, save %.1fs) %d params, %.1f MB of weights" % (
        t3 - t0, t1 - t0, t2 - t1, t3 - t2, facts["parameters"], facts["weight_bytes"] / 1e6)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out_dir = argv[1]
    names = argv[2:] or FULL
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print("unknown model(s): %s (known: %s)" % (" ".join(unknown), " ".join(MODELS)),
              file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    failed = []
    for name in names:
        t0 = time.monotonic()
        try:
            status = make(name, out_dir)
        except Exception as e:  # keep going; report at the end
            failed.append(name)
            status = "FAILED after %.1fs: %s: %s" % (time.monotonic() - t0, type(e).__name__, e)
        print("make_models: %-10s %s" % (name, status), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
