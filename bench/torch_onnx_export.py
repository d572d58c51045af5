#!/usr/bin/python3
"""torch.onnx 1.13's side of bench/run.sh: one export, timed in-process.

Usage:
  /usr/bin/python3 bench/torch_onnx_export.py --pt MODEL.pt --inputs DIR -o OUT.onnx
  /usr/bin/python3 bench/torch_onnx_export.py --module NAME --inputs DIR -o OUT.onnx
  PYTHONPATH=build/python /usr/bin/python3 bench/torch_onnx_export.py --module NAME \
      --exporter torchonnx --inputs DIR -o OUT.onnx

--pt      loads the TorchScript file with torch.jit.load (the same .pt torchonnx exports;
          torch.onnx then skips tracing and converts the ScriptModule's graph).
--module  rebuilds the nn.Module NAME of bench/make_models.py with its seeded weights
          (identical to the .pt's) and lets torch.onnx.export trace it, as torch.onnx
          users do; building the module is not timed.
--exporter torchonnx  calls torchonnx.export (the Python package over torchonnx's C++ core, the
          same arguments) instead of torch.onnx.export: the Python path, side by side.
Only torch.onnx.export(module, args, path, opset_version=17) is timed, under
torch.no_grad() (vit_b_16: grad on, see make_models.TRACE_WITH_GRAD). Models past
2 GB are written with external data by torch.onnx itself (one file per tensor
beside OUT.onnx). Prints one JSON line: {"export_seconds", "load_seconds",
"peak_rss_kb"}.
"""

import argparse
import json
import os
import resource
import sys
import time
import warnings

import torch

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--pt", help="TorchScript file (torch.jit.load)")
    src.add_argument("--module", help="model name of bench/make_models.py (nn.Module)")
    parser.add_argument("--inputs", required=True, help="folder with input_0.pb, ...")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--exporter", choices=["torch.onnx", "torchonnx"], default="torch.onnx")
    args = parser.parse_args()

    if args.exporter == "torchonnx":
        import torchonnx
        export = torchonnx.export
    else:
        export = torch.onnx.export
    t0 = time.monotonic()
    inputs = []
    while True:
        p = os.path.join(args.inputs, "input_%d.pb" % len(inputs))
        if not os.path.exists(p):
            break
        inputs.append(make_models.read_tensor_proto(p))
    if not inputs:
        print("torch_onnx_export: %s holds no input_0.pb" % args.inputs, file=sys.stderr)
        return 2
    if args.pt:
        module = torch.jit.load(args.pt)
    else:
        module = make_models.build(args.module)
    module.eval()
    load_seconds = time.monotonic() - t0

    warnings.simplefilter("ignore")  # TracerWarnings of --module, the same as at make time
    # no_grad, except for make_models.TRACE_WITH_GRAD models (their .pt is traced with grad on
    # too): torch.onnx 1.13 cannot export nn.MultiheadAttention's fused no-grad path.
    name = args.module or os.path.splitext(os.path.basename(args.pt))[0]
    with make_models.grad_mode(name):
        t1 = time.monotonic()
        export(module, tuple(inputs), args.output, opset_version=args.opset)
        export_seconds = time.monotonic() - t1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"export_seconds": export_seconds, "load_seconds": load_seconds,
                      "peak_rss_kb": peak}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
