"""Helpers of the Python package's tests: run an exported model in ONNX Runtime and compare with
eager PyTorch, and read the parts of an ONNX model the tests check (no onnx Python package on
Debian 12: a small protobuf reader).

ONNX Runtime: python3-onnxruntime when it is installed (Debian 13), else the Node runner
tools/verify/verify.mjs on the ONNX test-data layout written by torchonnx._C.write_test_data (as
the C++ tests on Debian 12). TORCHONNX_TEST_NODE_RUNNER=1 asks for the Node runner.
"""

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
import torch

import torchonnx

SOURCE_DIR = Path(__file__).resolve().parents[2]
VERIFY_MJS = SOURCE_DIR / "tools" / "verify" / "verify.mjs"


def _flatten(outputs):
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    flat = []
    for o in outputs:
        flat.extend(_flatten(o))
    return flat


def _python_ort():
    if os.environ.get("TORCHONNX_TEST_NODE_RUNNER") == "1":
        return None
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime


def run_in_ort(model, inputs, expected, rtol=1e-3, atol=1e-5, atol_scale=1e-4):
    """Runs `model` (a path or the model's bytes) in ONNX Runtime on `inputs` (tensors, fed to the
    graph inputs in order) and asserts that its outputs match `expected` (tensors, or eager
    PyTorch's nested outputs, flattened as the exporter flattens them) within verify.mjs's
    tolerance: |ort - torch| <= max(atol, atol_scale * scale) + rtol * |torch|."""
    inputs = [t.detach().contiguous() for t in _flatten(inputs)]
    expected = [t.detach().contiguous() for t in _flatten(expected)]
    with tempfile.TemporaryDirectory(prefix="torchonnx-py-") as tmp:
        if isinstance(model, bytes):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model)
        else:
            path = os.fspath(model)
        ort = _python_ort()
        if ort is not None:
            _compare_python_ort(ort, path, inputs, expected, rtol, atol, atol_scale)
            return
        data = os.path.join(tmp, "data")
        torchonnx._C.write_test_data(data, inputs, expected)
        r = subprocess.run(
            ["node", str(VERIFY_MJS), path, data, "--rtol", str(rtol), "--atol", str(atol),
             "--atol-scale", str(atol_scale)],
            capture_output=True, text=True)
        assert r.returncode == 0, f"ONNX Runtime differs from PyTorch:\n{r.stdout}\n{r.stderr}"


def _compare_python_ort(ort, path, inputs, expected, rtol, atol, atol_scale):
    import numpy as np

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    assert len(names) >= len(inputs), f"graph inputs {names} for {len(inputs)} inputs"
    outs = []  # a sequence output (a list of arrays) is its elements, as PyTorch's list flattens
    for out in session.run(None, {n: t.numpy() for n, t in zip(names, inputs)}):
        outs.extend(out if isinstance(out, list) else [out])
    assert len(outs) == len(expected), f"{len(outs)} outputs, expected {len(expected)}"
    for k, (got, want) in enumerate(zip(outs, expected)):
        want = want.numpy()
        assert got.shape == want.shape, f"output {k}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"output {k}: dtype {got.dtype} != {want.dtype}"
        if not np.issubdtype(want.dtype, np.floating):
            assert np.array_equal(got, want), f"output {k} differs"
            continue
        finite = np.abs(want[np.isfinite(want)])
        scale = float(finite.max()) if finite.size else 0.0
        nonzero = finite[finite > 0]
        if nonzero.size:
            scale = min(scale, 10 * float(np.median(nonzero)))
        tol = max(atol, atol_scale * scale) + rtol * np.abs(want)
        ok = (np.abs(got - want) <= tol) | (np.isnan(got) & np.isnan(want)) | (got == want)
        assert ok.all(), f"output {k}: max abs error {np.nanmax(np.abs(got - want))}"


# --------------------------------------------------------------------------------------------
# A protobuf reader for the parts of ModelProto the tests check.


def _varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _fields(buf):
    """(field number, value) of a message: ints for varints, bytes for length-delimited."""
    i, out = 0, []
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = bytes(buf[i : i + n]), i + n
        elif wire == 1:
            value, i = buf[i : i + 8], i + 8
        elif wire == 5:
            value, i = buf[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((field, value))
    return out


def _first(fields, number, default=None):
    for f, v in fields:
        if f == number:
            return v
    return default


def _all(fields, number):
    return [v for f, v in fields if f == number]


def _value_info(buf):
    """name, dims (an int, a dim_param, or None for a dim with neither) and elem_type of a
    ValueInfoProto's tensor type, or of the tensors of its sequence type (sequence: True)."""
    fields = _fields(buf)
    name = _first(fields, 1, b"").decode()
    dims = None
    elem_type = None
    type_fields = _fields(_first(fields, 2, b""))
    sequence = _first(type_fields, 4)
    if sequence is not None:  # TypeProto.sequence_type: its elem_type, a TypeProto
        type_fields = _fields(_first(_fields(sequence), 1, b""))
    tensor = _first(type_fields, 1)
    if tensor is not None:
        tf = _fields(tensor)
        elem_type = _first(tf, 1)
        shape = _first(tf, 2)
        if shape is not None:
            dims = []
            for d in _all(_fields(shape), 1):
                df = _fields(d)
                param = _first(df, 2)
                dims.append(param.decode() if param is not None else _first(df, 1))
    return {"name": name, "dims": dims, "elem_type": elem_type, "sequence": sequence is not None}


def _attribute(buf):
    """(name, value) of an AttributeProto: FLOAT, INT, STRING, INTS (packed or not), FLOATS."""
    import struct

    fields = _fields(buf)
    name = _first(fields, 1, b"").decode()
    kind = _first(fields, 20, 0)
    if kind == 1:
        return name, struct.unpack("<f", _first(fields, 2))[0]
    if kind == 2:
        i = _first(fields, 3, 0)
        return name, i - (1 << 64) if i >= 1 << 63 else i
    if kind == 3:
        return name, _first(fields, 4, b"").decode()
    if kind == 7:
        ints = []
        for v in _all(fields, 8):
            if isinstance(v, bytes):  # packed
                j = 0
                while j < len(v):
                    x, j = _varint(v, j)
                    ints.append(x - (1 << 64) if x >= 1 << 63 else x)
            else:
                ints.append(v - (1 << 64) if v >= 1 << 63 else v)
        return name, ints
    return name, None


class OnnxModel:
    """The graph inputs, outputs, initializer names, nodes, opset imports and local functions of
    a serialized ModelProto."""

    def __init__(self, data):
        if not isinstance(data, (bytes, bytearray)):
            data = Path(data).read_bytes()
        model = _fields(data)
        graph = _fields(_first(model, 7, b""))
        self.inputs = [_value_info(v) for v in _all(graph, 11)]
        self.outputs = [_value_info(v) for v in _all(graph, 12)]
        self.initializers = [_first(_fields(t), 8, b"").decode() for t in _all(graph, 5)]
        self.nodes = []
        for n in _all(graph, 1):
            nf = _fields(n)
            self.nodes.append({
                "op_type": _first(nf, 4, b"").decode(),
                "domain": _first(nf, 7, b"").decode(),
                "inputs": [x.decode() for x in _all(nf, 1)],
                "outputs": [x.decode() for x in _all(nf, 2)],
                "attributes": dict(_attribute(a) for a in _all(nf, 5)),
                "doc_string": _first(nf, 6, b"").decode(),
            })
        self.opsets = {}
        for o in _all(model, 8):
            of = _fields(o)
            self.opsets[_first(of, 1, b"").decode()] = _first(of, 2, 0)
        self.functions = [_first(_fields(f), 1, b"").decode() for f in _all(model, 25)]

    @property
    def input_names(self):
        return [i["name"] for i in self.inputs]

    @property
    def output_names(self):
        return [o["name"] for o in self.outputs]

    @property
    def op_types(self):
        return [n["op_type"] for n in self.nodes]


@pytest.fixture
def tmp_onnx(tmp_path):
    return tmp_path / "model.onnx"
