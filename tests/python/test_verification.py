"""torchonnx.verification: verify and find_mismatch with torch.onnx.verification's arguments,
over the C++ verify (ONNX Runtime in-process: the Debian 13 build). On a build without ONNX
Runtime's C++ API (Debian 12) both say how to get one."""

import io

import pytest
import torch
import torch.nn as nn

import torchonnx
from torchonnx import verification

AVAILABLE = verification.verify_available()
needs_ort = pytest.mark.skipif(not AVAILABLE, reason="a build without ONNX Runtime's C++ API "
                               "(Debian 12): test_unavailable_says_how_to_get_it runs instead")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x)) * 2.0, x.sum(1)


@pytest.mark.skipif(AVAILABLE, reason="this build verifies: the other tests of this file run")
def test_unavailable_says_how_to_get_it():
    with pytest.raises(torchonnx.errors.InvalidArgumentError, match="ONNX Runtime"):
        verification.verify(Net(), (torch.randn(2, 4),))


@needs_ort
def test_verify_passes_and_returns_the_comparison():
    result = verification.verify(Net(), (torch.randn(2, 4),), opset_version=13)
    assert result.passed and result.opset == 13
    outputs = result.input_sets[0]["outputs"]
    assert [o["shape"] for o in outputs] == [[2, 3], [2]]
    assert "PASS" in result.table


@needs_ort
def test_verify_on_additional_inputs_and_dynamic_axes():
    model = Net()
    result = verification.verify(
        model, (torch.randn(2, 4),), input_names=["x"], dynamic_axes={"x": [0]},
        additional_test_inputs=[(torch.randn(5, 4),), torch.randn(1, 4)])
    assert result.passed
    assert [s["inputs"] for s in result.input_sets] == [
        "example", "additional_test_inputs[0]", "additional_test_inputs[1]"]


@needs_ort
def test_verify_of_a_script_module_with_torch2_options():
    @torch.jit.script
    def f(x, n: int):
        for _ in range(n):
            x = torch.tanh(x) + 1.0
        return x

    class M(nn.Module):
        def forward(self, x, n: int):
            return f(x, n)

    options = verification.VerificationOptions(rtol=1e-4, atol=1e-6)
    result = verification.verify(torch.jit.script(M()), (torch.randn(3), 4), options=options)
    assert result.passed and result.data["rtol"] == 1e-4


def _wrong_relu(g, x):
    return g.op("Sigmoid", x)


@needs_ort
def test_a_wrong_symbolic_fails_verify_and_find_mismatch_names_it():
    torchonnx.register_custom_op_symbolic("aten::relu", _wrong_relu, 9)
    try:
        with pytest.raises(AssertionError, match="differ"):
            verification.verify(Net(), (torch.randn(2, 4),))
        info = verification.find_mismatch(Net(), (torch.randn(2, 4),))
        assert info.has_mismatch()
        assert info.mismatch["kind"] == "aten::relu"
        assert info.mismatch["onnx_ops"] == ["Sigmoid"]
        out = io.StringIO()
        info.pretty_print_mismatch(file=out)
        assert "aten::relu" in out.getvalue()
    finally:
        torchonnx.unregister_custom_op_symbolic("aten::relu", 9)
    assert not verification.find_mismatch(Net(), (torch.randn(2, 4),)).has_mismatch()
