"""Routing a script's torch.onnx calls to torchonnx: `python3 -m torchonnx script.py` and
torchonnx.patch_torch_onnx()."""

import inspect
import io
import os
import subprocess
import sys
import textwrap

import torch
import torch.nn as nn

import torchonnx
from conftest import OnnxModel, _all, _fields, _first, run_in_ort


def producer(data: bytes) -> str:
    return _first(_fields(data), 2, b"").decode()


def exporter(data: bytes) -> str:
    """Which exporter wrote the model: torchonnx names itself in the metadata entry "exporter"
    (ModelProto field 14; its producer_name is "pytorch", as torch.onnx's, Note [Producer]);
    torch.onnx writes no such entry."""
    for entry in _all(_fields(data), 14):
        fields = _fields(entry)
        if _first(fields, 1, b"") == b"exporter" and _first(fields, 2, b"").startswith(b"torchonnx "):
            return "torchonnx"
    return "torch.onnx"


def test_patch_context_manager_and_undo():
    original = torch.onnx.export
    model, x = nn.Linear(3, 2), torch.randn(1, 3)
    with torchonnx.patch_torch_onnx() as patch:
        assert patch.active
        assert torch.onnx.export is torchonnx.export
        assert torch.onnx.utils.unconvertible_ops is torchonnx.unconvertible_ops
        f = io.BytesIO()
        torch.onnx.export(model, x, f, input_names=["x"])
        assert exporter(f.getvalue()) == "torchonnx"
        assert producer(f.getvalue()) == "pytorch"
    assert torch.onnx.export is original and not patch.active
    f = io.BytesIO()
    # torch.onnx's TorchScript exporter: torch 2.9+ defaults to dynamo=True, which needs
    # onnxscript (not in Debian).
    own = {"dynamo": False} if "dynamo" in inspect.signature(original).parameters else {}
    torch.onnx.export(model, x, f, **own)
    assert exporter(f.getvalue()) == "torch.onnx"  # torch.onnx's own again
    # torch.onnx 2.6 has no export_to_pretty_string: the patch replaces what torch.onnx has.
    had_it = hasattr(torch.onnx, "export_to_pretty_string")
    patch = torchonnx.patch_torch_onnx()
    try:
        if had_it:
            assert torch.onnx.export_to_pretty_string is torchonnx.export_to_pretty_string
        else:
            assert not hasattr(torch.onnx, "export_to_pretty_string")
        assert torch.onnx.utils.unconvertible_ops is torchonnx.unconvertible_ops
    finally:
        patch.undo()
    assert torch.onnx.export is original


def test_patched_registration_reaches_torch_onnx_registry_too():
    # While patched, a custom symbolic is registered in torchonnx and in torch.onnx's own
    # registry, which the parts of torch.onnx the patch does not route read (its verification's
    # find_mismatch converts with it).
    try:  # torch 2.9+ keeps the TorchScript exporter's registry here
        from torch.onnx._internal.torchscript_exporter import registration
    except ImportError:
        from torch.onnx._internal import registration

    def neg_as_relu(g, x):
        return g.op("Relu", x)

    with torchonnx.patch_torch_onnx():
        torch.onnx.register_custom_op_symbolic("custom_ns::my_neg", neg_as_relu, 9)
        try:
            assert registration.registry.is_registered_op("custom_ns::my_neg", 9)
        finally:
            torch.onnx.unregister_custom_op_symbolic("custom_ns::my_neg", 9)
        assert not registration.registry.is_registered_op("custom_ns::my_neg", 9)


def test_python_m_torchonnx_runs_a_script_unchanged(tmp_path):
    script = tmp_path / "export_script.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        from torch.onnx import export   # imported by name, as scripts do

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 3)

            def forward(self, x):
                print("in export:", torch.onnx.is_in_onnx_export())
                return torch.relu(self.fc(x))

        torch.manual_seed(0)
        net, x = Net(), torch.randn(2, 4)
        export(net, x, sys.argv[1], input_names=["x"], output_names=["y"],
               dynamic_axes={"x": {0: "batch"}})
        try:
            torch.onnx.export(net, x, sys.argv[1], opset_version=99)
        except torch.onnx.errors.OnnxExporterError as e:
            print("caught:", type(e).__module__, type(e).__name__)
        torch.save({"x": x, "y": net(x)}, sys.argv[1] + ".pt")
    """))
    out = tmp_path / "net.onnx"
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "torchonnx", str(script), str(out)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "caught: torchonnx.errors InvalidArgumentError" in r.stdout
    # traced once by torchonnx's export, then called by the script
    assert r.stdout.count("in export: True") == 1 and "in export: False" in r.stdout
    data = out.read_bytes()
    assert exporter(data) == "torchonnx"
    m = OnnxModel(data)
    assert m.input_names == ["x"] and m.inputs[0]["dims"] == ["batch", 4]
    saved = torch.load(str(out) + ".pt")
    run_in_ort(out, [saved["x"]], [saved["y"]])


def test_python_m_torchonnx_usage():
    r = subprocess.run([sys.executable, "-m", "torchonnx"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage: python3 -m torchonnx SCRIPT.py" in r.stderr
    r = subprocess.run([sys.executable, "-m", "torchonnx", "no_such_script.py"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "can't open file 'no_such_script.py'" in r.stderr
