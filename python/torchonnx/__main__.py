"""python3 -m torchonnx script.py [args...] | -m module [args...]: runs a script (or module) as
python3 would, with its torch.onnx export calls routed to torchonnx (torchonnx.patch_torch_onnx)."""

import os
import runpy
import sys

USAGE = """usage: python3 -m torchonnx SCRIPT.py [ARGS...]
       python3 -m torchonnx -m MODULE [ARGS...]

Runs the script (or module) with torch.onnx.export, export_to_pretty_string,
register_custom_op_symbolic, unregister_custom_op_symbolic, utils.unconvertible_ops and the log
functions replaced by torchonnx's, so that its exports run on torchonnx's C++ exporter
unchanged."""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    from . import patch_torch_onnx

    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        with patch_torch_onnx():
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.isfile(script):
        print(f"python3 -m torchonnx: can't open file '{script}'", file=sys.stderr)
        return 2
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    with patch_torch_onnx():
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
