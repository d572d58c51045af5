"""Constructs PyTorch's own ONNX tests export: a traced torch.jit fork/wait (inlined, as
torch.onnx's _jit_pass_inline_fork_wait does) and float8 inputs (ONNX's FLOAT8E4M3FN = 17,
FLOAT8E5M2 = 19, opset 19)."""

import io

import pytest
import torch
import torch.nn as nn

import torchonnx
from conftest import OnnxModel, run_in_ort


def _fork_body(x):
    return torch.neg(x), torch.exp(x)


class _Forks(nn.Module):
    def forward(self, x):
        fut = torch.jit._fork(_fork_body, x)
        a, b = torch.jit._wait(fut)
        return a + 1, b


@pytest.mark.parametrize("opset", [9, 17])
def test_traced_fork_wait_is_inlined(opset):
    x = torch.rand(3, 4)
    f = io.BytesIO()
    torchonnx.export(_Forks(), (x,), f, opset_version=opset)
    ops = OnnxModel(f.getvalue()).op_types
    assert "Neg" in ops and "Exp" in ops
    run_in_ort(f.getvalue(), [x], _Forks()(x))


@pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="libtorch without float8")
@pytest.mark.parametrize("dtype,elem_type", [("float8_e4m3fn", 17), ("float8_e5m2", 19)])
def test_float8_input(dtype, elem_type):
    onnx = pytest.importorskip("onnx")

    class M(nn.Module):
        def forward(self, x):
            return x.to(torch.float32)

    x = torch.randn(2, 3).to(getattr(torch, dtype))
    f = io.BytesIO()
    torchonnx.export(M(), (x,), f, opset_version=19)
    m = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(m)
    assert m.graph.input[0].type.tensor_type.elem_type == elem_type
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert [n.op_type for n in m.graph.node] == ["Cast"]
