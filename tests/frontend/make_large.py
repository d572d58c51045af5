#!/usr/bin/python3
"""Makes the memory test's model (issue 22): a traced MLP with more weight bytes than the memory
the test lets torchonnx use.

Usage: /usr/bin/python3 tests/frontend/make_large.py OUT_DIR

Writes OUT_DIR/mlp_400m.pt (24 Linear(2048, 2048) layers with ReLU: 100.7M float parameters,
403 MB, random weights from torch.manual_seed(0)) and OUT_DIR/mlp_400m/input_0.pb (a 1x2048
float input). Skipped when both exist and the .pt is newer than this script.
"""

import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from make_torchvision import _write_atomic, tensor_proto_bytes  # noqa: E402

LAYERS, WIDTH = 24, 2048


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "mlp_400m"), exist_ok=True)
    pt = os.path.join(out, "mlp_400m.pt")
    inp = os.path.join(out, "mlp_400m", "input_0.pb")
    if (os.path.exists(pt) and os.path.exists(inp) and
            os.path.getmtime(pt) > os.path.getmtime(os.path.abspath(__file__))):
        return
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    model = nn.Sequential(*layers).eval()
    x = torch.randn(1, WIDTH)
    with torch.no_grad():
        traced = torch.jit.trace(model, (x,))
    _write_atomic(pt, save=lambda path: torch.jit.save(traced, path))
    _write_atomic(inp, tensor_proto_bytes(x))


if __name__ == "__main__":
    main()
