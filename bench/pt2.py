#!/usr/bin/python3
"""The .pt2 rows of the benchmark (issue 39): torchonnx exporting a torch.export program (.pt2)
beside the same model traced to TorchScript (.pt), time and peak RSS, in one run.

Run in the Debian 13 root (PyTorch 2.6 makes both files; the libtorch 2.6 build exports them):
    bash scripts/debian13.sh /usr/bin/python3 bench/pt2.py [--runs N] [--build DIR] [--out FILE]

Each export is a fresh `torchonnx export` process under /usr/bin/time -v (wall seconds, max RSS);
the table gives the median of --runs runs (default 3) and the .pt2 / .pt ratios. The models:
resnet50 (torchvision, random weights, 2x3x224x224, dynamic batch) and a 6-layer
TransformerEncoder (d=512, 8 heads, 2x64x512, dynamic batch and sequence). Not a test: nothing
here runs in ctest or .ci/run.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
from torch.export import Dim


def resnet50():
    import torchvision

    return torchvision.models.resnet50(weights=None).eval(), (torch.randn(2, 3, 224, 224),), \
        {"x": {0: Dim("batch", min=1, max=64)}}


def transformer():
    layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False).eval()
    return model, (torch.randn(2, 64, 512),), \
        {"src": {0: Dim("batch", min=1, max=64), 1: Dim("seq", min=2, max=512)}}


MODELS = {"resnet50": resnet50, "transformer_encoder_6x512": transformer}


def measure(cmd):
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    h, m, s = wall.groups()
    seconds = (int(h) if h else 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return seconds, rss / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--build", default=os.environ.get("TORCHONNX_BUILD_DIR", "build-debian13"))
    parser.add_argument("--out", default="bench/PT2.md")
    args = parser.parse_args()
    cli = os.path.abspath(os.path.join(args.build, "torchonnx"))
    if not os.path.exists(cli):
        print("pt2.py: %s is missing: build the libtorch 2.6 build first" % cli, file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, build in MODELS.items():
            torch.manual_seed(0)
            model, inputs, dynamic = build()
            pt, pt2 = os.path.join(work, name + ".pt"), os.path.join(work, name + ".pt2")
            with torch.no_grad():
                torch.jit.save(torch.jit.trace(model, inputs), pt)
            torch.export.save(torch.export.export(model, inputs, dynamic_shapes=dynamic), pt2)
            shape = "x".join(str(d) for d in inputs[0].shape)
            axes = []
            for k, v in dynamic.items():
                axes += ["--dynamic-axes", "%s:%s" % (k, ",".join(str(a) for a in v))]
            commands = {
                ".pt": [cli, "export", pt, "-o", os.path.join(work, "pt.onnx"), "--input", shape,
                        "--input-names", ",".join(dynamic), "--quiet"] + axes,
                ".pt2": [cli, "export", pt2, "-o", os.path.join(work, "pt2.onnx"), "--quiet"],
            }
            result = {}
            for _ in range(args.runs):  # alternating, so that load hits both alike
                for kind, cmd in commands.items():
                    result.setdefault(kind, []).append(measure(cmd))
            med = {k: (statistics.median(t for t, _ in v), statistics.median(r for _, r in v))
                   for k, v in result.items()}
            rows.append((name, os.path.getsize(pt) / 2**20, os.path.getsize(pt2) / 2**20, med))
            print(name, med, flush=True)
    lines = [
        "# .pt2 beside .pt: torchonnx export (bench/pt2.py)",
        "",
        "torch %s, median of %d runs each, fresh process per export, 2 cores; wall time and"
        " peak RSS of `torchonnx export` (the .pt2 with its own example inputs and dynamic dims,"
        " the .pt with the same shapes and dynamic axes given on the command line)." %
        (torch.__version__, args.runs),
        "",
        "| model | file MB .pt / .pt2 | time .pt s | time .pt2 s | ratio | RSS .pt MB |"
        " RSS .pt2 MB | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, size_pt, size_pt2, med in rows:
        (t1, r1), (t2, r2) = med[".pt"], med[".pt2"]
        lines.append("| %s | %.0f / %.0f | %.2f | %.2f | %.2f | %.0f | %.0f | %.2f |" %
                     (name, size_pt, size_pt2, t1, t2, t2 / t1, r1, r2, r2 / r1))
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
