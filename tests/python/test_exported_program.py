"""torch.export programs through the Python package (issue 39): torchonnx.export takes a
torch.export.ExportedProgram, as torch.onnx.export does, and exports it with the C++ reader of
.pt2 files (the libtorch 2.x build). Skipped where torch has no torch.export (Debian 12's 1.13)."""

import io
import warnings

import pytest
import torch
import torch.nn as nn

import torchonnx
from conftest import OnnxModel, run_in_ort

pytestmark = pytest.mark.skipif(
    not hasattr(torch, "export") or not hasattr(torch.export, "save"),
    reason="torch.export needs PyTorch 2.x (the Debian 13 build)",
)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.fc(x))).view(x.size(0), 2, 2)


def program():
    torch.manual_seed(0)
    model = Net().eval()
    x = torch.randn(3, 6)
    ep = torch.export.export(model, (x,),
                             dynamic_shapes={"x": {0: torch.export.Dim("batch", max=64)}})
    return model, ep, x


def batch_symbol(ep):
    """The symbol torch.export named x's batch dim: s0 in torch 2.6, a hashed name (s77) in 2.14."""
    x = next(n for n in ep.graph.nodes
             if n.op == "placeholder" and n.name == ep.graph_signature.user_inputs[0])
    return str(x.meta["val"].shape[0])


def test_export_of_an_exported_program_with_its_example_inputs_and_dims():
    model, ep, x = program()
    f = io.BytesIO()
    torchonnx.export(ep, (), f, dynamo=True)
    m = OnnxModel(f.getvalue())
    assert m.inputs[0]["name"] == "x"
    assert m.inputs[0]["dims"] == [batch_symbol(ep), 6]
    assert "fc.weight" in m.initializers or "fc.bias" in m.initializers
    for n in (3, 1, 5):  # other batch sizes than the example's
        y = torch.randn(n, 6)
        with torch.no_grad():
            run_in_ort(f.getvalue(), [y], [model(y)])


def test_input_names_rename_the_programs_dims_and_args_are_optional(tmp_path):
    _, ep, x = program()
    path = tmp_path / "m.onnx"
    torchonnx.export(ep, f=str(path), input_names=["features"])
    m = OnnxModel(path.read_bytes())
    assert m.inputs[0]["name"] == "features"
    assert m.inputs[0]["dims"] == [batch_symbol(ep), 6]


def test_f_is_required():
    _, ep, _ = program()
    with pytest.raises(torchonnx.errors.InvalidArgumentError, match="f is required"):
        torchonnx.export(ep)
