"""export_modules_as_functions through the Python API, in torch.onnx's form: one function per
structure of a class ("Name", "Name.1", ...), the values that differ between its calls as function
attributes ("inferred::<op>_<attr>"), the modules' annotated attributes on the calls, the model's
own class selectable (onnx/module_functions.cpp, Note [Function attributes])."""

import io

import pytest
import torch
import torch.nn as nn

import torchonnx
from conftest import run_in_ort

@pytest.fixture
def onnx():
    return pytest.importorskip("onnx")


def export(model, args, **kw):
    import onnx

    f = io.BytesIO()
    torchonnx.export(model, args, f, opset_version=kw.pop("opset_version", 17), **kw)
    return f.getvalue(), onnx.load_from_string(f.getvalue())


class TwoCelus(nn.Module):
    def __init__(self):
        super().__init__()
        self.celu1 = nn.CELU(1.0)
        self.celu2 = nn.CELU(2.0)

    def forward(self, x, y):
        return self.celu1(x) + self.celu2(y)


@pytest.mark.parametrize("opset", [15, 17, 18])
def test_values_that_differ_become_function_attributes(onnx, opset):
    x, y = torch.randn(2, 3) - 0.5, torch.randn(2, 3) - 0.5
    model = TwoCelus().eval()
    data, m = export(model, (x, y), opset_version=opset, export_modules_as_functions={nn.CELU})
    assert [f.name for f in m.functions] == ["CELU"]
    fn = m.functions[0]
    assert fn.domain == "torch.nn.modules.activation"
    # The differing alpha, then CELU's annotated attributes (alpha: float, inplace: bool).
    assert list(fn.attribute) == ["inferred::Celu_alpha", "alpha", "inplace"]
    (celu,) = [n for n in fn.node if n.op_type == "Celu"]
    assert celu.attribute[0].ref_attr_name == "inferred::Celu_alpha"
    calls = [n for n in m.graph.node if n.op_type == "CELU"]
    assert len(calls) == 2
    for call, alpha in zip(calls, (1.0, 2.0)):
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in call.attribute}
        assert attrs == {"inferred::Celu_alpha": alpha, "alpha": alpha, "inplace": 0}
    run_in_ort(data, (x, y), model(x, y))


class Stack(nn.Module):
    num_layers: int

    def __init__(self, num_layers):
        super().__init__()
        self.num_layers = num_layers
        self.lns = nn.ModuleList([nn.LayerNorm(3, eps=1e-4) for _ in range(num_layers)])

    def forward(self, x):
        for ln in self.lns:
            x = ln(x)
        return x


def test_annotated_attributes_and_the_model_as_a_function(onnx):
    x = torch.randn(2, 3)
    model = Stack(3).eval()
    data, m = export(model, (x,), export_modules_as_functions=True)
    by_name = {f.name: f for f in m.functions}
    assert set(by_name) == {"Stack", "LayerNorm"}
    assert list(by_name["Stack"].attribute) == ["num_layers"]
    # normalized_shape is a tuple: torch.onnx records no tuples.
    assert list(by_name["LayerNorm"].attribute) == ["eps", "elementwise_affine"]
    (call,) = m.graph.node
    assert call.op_type == "Stack"
    assert call.attribute[0] == onnx.helper.make_attribute("num_layers", 3)
    # The LayerNorms of the ModuleList ("lns.0", which the call stack names "0") have theirs.
    ln_calls = [n for n in by_name["Stack"].node if n.op_type == "LayerNorm"]
    assert len(ln_calls) == 3
    for n in ln_calls:
        assert {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} == {
            "eps": pytest.approx(1e-4), "elementwise_affine": 1}
    run_in_ort(data, (x,), model(x))


class Overloads(nn.Module):
    def forward(self, x, y=None, z=None):
        if y is None:
            return x + 1
        if z is None:
            return x + y
        return x + y, x + z


class CallsOverloads(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = Overloads()

    def forward(self, x, y, z):
        return self.n(x), self.n(x, y), self.n(x, y, z)


def test_calls_of_one_instance_with_other_arguments_are_functions_of_their_own(onnx):
    # A traced graph has no call sites: the tracer's methods (forward, forward1, forward2) tell
    # the three calls apart; their bodies differ, so three functions, named as torch.onnx does.
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    model = CallsOverloads()
    data, m = export(model, (x, y, z), export_modules_as_functions={Overloads})
    assert sorted(f.name for f in m.functions) == ["Overloads", "Overloads.1", "Overloads.2"]
    assert len([n for n in m.graph.node if n.domain == "__main__" or "Overloads" in n.op_type]) == 3
    run_in_ort(data, (x, y, z), model(x, y, z))
