#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (committed; run again
after changing it: python3 fuzz/make_corpus.py). The .pt seeds need Debian's python3-torch; the
TensorProto seeds are encoded by hand (protobuf wire format, no onnx module needed). Regression
inputs found by fuzzing (regress-*) are kept as they are."""
import io
import os
import struct
import sys
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# --- onnx.TensorProto, by hand -------------------------------------------------------------
def varint(n):
    n &= (1 << 64) - 1  # negative int64 as protobuf writes it (ten bytes)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def vfield(field, n):
    return key(field, 0) + varint(n)


def lfield(field, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return key(field, 2) + varint(len(payload)) + payload


def packed(field, values, fmt=None):
    body = b"".join(struct.pack("<" + fmt, v) for v in values) if fmt else b"".join(
        varint(v) for v in values)
    return lfield(field, body)


FLOAT, UINT8, INT8, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE, BFLOAT16 = (
    1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 16)


def tensor(dims, dtype, name="input_0", body=b"", packed_dims=False):
    out = packed(1, dims) if packed_dims else b"".join(vfield(1, d) for d in dims)
    return out + vfield(2, dtype) + lfield(8, name) + body


def tensor_proto_corpus():
    t = "tensor_proto"
    floats = [0.5, -1.0, 2.25, 3.0, 1e-3, -7.5]
    write(t, "float_raw", tensor([2, 3], FLOAT, body=lfield(9, struct.pack("<6f", *floats))))
    write(t, "float_field", tensor([2, 3], FLOAT, body=packed(4, floats, "f")))
    write(t, "float_packed_dims", tensor([3, 2], FLOAT, body=packed(4, floats, "f"),
                                         packed_dims=True))
    write(t, "double_field", tensor([2], DOUBLE, body=packed(10, [1.5, -2.5], "d")))
    write(t, "int64_field", tensor([4], INT64, body=packed(7, [1, -2, 1 << 40, -(1 << 62)])))
    write(t, "int32_field", tensor([2, 2], INT32, body=packed(5, [1, -1, 1 << 30, 7])))
    write(t, "int16_field", tensor([2], INT16, body=packed(5, [300, -300])))
    write(t, "int8_field", tensor([3], INT8, body=packed(5, [1, -128, 127])))
    write(t, "uint8_field", tensor([3], UINT8, body=packed(5, [0, 255, 256])))
    write(t, "bool_field", tensor([3], BOOL, body=packed(5, [0, 1, 2])))
    write(t, "bool_raw", tensor([2], BOOL, body=lfield(9, b"\x00\x01")))
    write(t, "float16_raw", tensor([2], FLOAT16, body=lfield(9, b"\x00\x3c\x00\xc0")))
    write(t, "bfloat16_raw", tensor([2], BFLOAT16, body=lfield(9, b"\x80\x3f\x00\xc0")))
    write(t, "int64_scalar", tensor([], INT64, body=lfield(9, struct.pack("<q", 42))))
    write(t, "zero_dim", tensor([0, 4], FLOAT, body=lfield(9, b"")))
    write(t, "zero_dim_huge", tensor([0, 1 << 40, 1 << 40], FLOAT, body=b""))
    write(t, "negative_dim", tensor([-1, 2], FLOAT, body=packed(4, [1.0, 2.0], "f")))
    write(t, "absurd_dims", tensor([1 << 31, 1 << 31, 4], FLOAT, body=b""))
    write(t, "count_mismatch", tensor([3], INT64, body=packed(7, [1, 2])))
    write(t, "raw_short", tensor([4], INT32, body=lfield(9, b"\x01\x00\x00\x00")))
    write(t, "string_type", tensor([1], STRING, body=lfield(6, "hello")))
    write(t, "unknown_type", tensor([1], 99, body=lfield(9, b"\x00")))
    external = lfield(13, lfield(1, "location") + lfield(2, "weights.bin"))
    write(t, "external_data", tensor([2], FLOAT, body=external + vfield(14, 1)))
    write(t, "truncated", tensor([2, 3], FLOAT, body=lfield(9, struct.pack("<6f", *floats)))[:-5])
    write(t, "empty", b"")
    write(t, "not_protobuf", b"\xff\xff\xff\xff garbage")


# --- --input SHAPE[:DTYPE] ------------------------------------------------------------------
def input_spec_corpus():
    specs = {
        "image": "1x3x224x224", "int64": "2x7:int64", "scalar_bool": "scalar:bool",
        "scalar": "scalar", "float16": "0x5:float16", "bfloat16": "1x2:bfloat16",
        "uint8": "4:uint8", "double": "3x3:double", "bare_x": "x", "double_x": "1xx2",
        "negative": "-1", "plus": "+1", "overflow": "99999999999x99999999",
        "big": "65536x65536", "empty_dtype": "3:", "no_dims": ":int8", "space": "1 x2",
        "zero_then_huge": "0x9223372036854775807x9223372036854775807", "two_colons": "2:int8:x",
        "unknown_dtype": "2:complex64", "long_int": "123456789012345678901234",
    }
    for name, spec in specs.items():
        write("input_spec", name, spec)


def dynamic_axes_corpus():
    specs = {
        "labels": "input:0=batch,1=sequence", "bare": "out:0", "colon_in_name": "a:b:1",
        "no_name": ":0", "no_axes": "x:", "twice": "x:0,0", "negative": "x:-64",
        "too_big": "x:65", "empty_label": "x:0=", "lines": "x:0=\nx:1=l\ny:2\nx:0=again",
        "trailing_comma": "x:0,", "equals_only": "x:=a", "spaces": "x: 1",
    }
    for name, spec in specs.items():
        write("dynamic_axes", name, spec)


def cli_corpus():
    lines = {
        "export": ["export", "m.pt", "-o", "out.onnx", "--input", "1x3x8x8"],
        "export_all": ["export", "m.pt", "-o", "out.onnx", "--input", "2x3:int64", "--input",
                       "scalar:bool", "--opset", "13", "--input-names", "a,b",
                       "--output-names", "y", "--dynamic-axes", "a:0=batch,1",
                       "--dynamic-axes", "y:0", "--training", "preserve",
                       "--operator-export-type", "onnx_aten_fallback", "--custom-opset",
                       "custom_domain=2", "--no-constant-folding", "--no-export-params",
                       "--keep-initializers-as-inputs", "--external-data",
                       "--external-data-threshold", "1024", "--external-data-layout",
                       "per-tensor", "--external-data-location", "w.bin", "--verbose",
                       "--quiet", "--modules-as-functions", "Linear,Conv2d",
                       "--save-test-data", "td", "--load-library", "libfoo.so"],
        "print_dot": ["print", "m.pt", "--input", "2:int64", "--format", "dot", "-o", "g.dot"],
        "unconvertible": ["unconvertible", "m.pt", "--inputs", "data", "--json", "--opset", "9"],
        "ops": ["ops", "--opset", "13"],
        "help": ["--help"],
        "export_help": ["export", "--help"],
        "version": ["--version"],
        "bad_opset": ["export", "m.pt", "-o", "o", "--input", "1", "--opset", "99"],
        "bad_axes": ["export", "m.pt", "-o", "o", "--input", "1", "--dynamic-axes", "x"],
        "bad_custom_opset": ["print", "m.pt", "--input", "1", "--custom-opset", "d=0"],
        "no_inputs": ["export", "m.pt", "-o", "o"],
        "both_inputs": ["export", "m.pt", "-o", "o", "--input", "1", "--inputs", "d"],
        "bad_threshold": ["export", "m.pt", "-o", "o", "--input", "1",
                          "--external-data-threshold", "-5"],
        "equals_form": ["export", "m.pt", "--output=o", "--input=2x2", "--opset=17"],
        "empty": [],
        "empty_arg": [""],
    }
    for name, args in lines.items():
        write("cli", name, "\n".join(args))


# --- .pt archives ---------------------------------------------------------------------------
def load_model_corpus():
    import torch

    torch.manual_seed(0)

    class Small(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 2)

        def forward(self, x):
            return torch.relu(self.linear(x)) * 2

    class Scripted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 0.5
            self.names = ["a", "b"]
            self.table = {"k": 1}

        def forward(self, x, n: int):
            out = []
            for i in range(n):
                if i % 2 == 0:
                    out.append(x * self.scale + i)
                else:
                    out.append(x - self.table["k"])
            return torch.stack(out).sum(0), len(self.names)

    class Nested(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Sequential(torch.nn.Conv2d(1, 1, 1), torch.nn.ReLU())
            self.register_buffer("offset", torch.tensor([1.0, 2.0]))

        def forward(self, x):
            y = self.inner(x)
            return y.flatten(1)[:, :2] + self.offset

    def save(name, module):
        buf = io.BytesIO()
        torch.jit.save(module, buf)
        write("load_model", name, buf.getvalue())

    save("traced_linear.pt", torch.jit.trace(Small().eval(), torch.randn(1, 3)))
    save("scripted_loop.pt", torch.jit.script(Scripted()))
    save("scripted_nested.pt", torch.jit.script(Nested().eval()))
    save("traced_nested.pt", torch.jit.trace(Nested().eval(), torch.randn(1, 1, 2, 2)))

    # Not TorchScript: a state dict (pickle zip without code), a zip of a text file, truncations.
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    write("load_model", "state_dict.pt", buf.getvalue())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/readme.txt", "not a model")
    write("load_model", "plain.zip", buf.getvalue())
    with open(os.path.join(ROOT, "load_model", "traced_linear.pt"), "rb") as f:
        traced = f.read()
    write("load_model", "truncated.pt", traced[: len(traced) // 2])
    write("load_model", "end_of_central_directory_only", b"PK\x05\x06" + b"\x00" * 18)


def main():
    tensor_proto_corpus()
    input_spec_corpus()
    dynamic_axes_corpus()
    cli_corpus()
    if "--no-torch" not in sys.argv:
        load_model_corpus()


if __name__ == "__main__":
    main()
