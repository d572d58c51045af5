"""torchonnx's exceptions: torch.onnx.errors' classes (so `except torch.onnx.errors.X` catches
them), raised where torch.onnx raises them, with torchonnx's messages (op, source location,
remedy) and the C++ core's error code."""

import io
import os

import pytest
import torch
import torch.nn as nn

import torchonnx
from torchonnx import errors

# torch.onnx 2.6 defines no errors.CheckerError (its checker errors are OnnxExporterErrors).
TORCH_CHECKER_ERROR = getattr(torch.onnx.errors, "CheckerError", torch.onnx.errors.OnnxExporterError)


class Lgamma(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return torch.lgamma(y) + torch.lgamma(y + 1) + torch.digamma(y + 2)


def test_classes_are_torch_onnx_classes():
    assert issubclass(errors.OnnxExporterError, torch.onnx.errors.OnnxExporterError)
    assert issubclass(errors.CheckerError, TORCH_CHECKER_ERROR)
    assert issubclass(errors.UnsupportedOperatorError, torch.onnx.errors.UnsupportedOperatorError)
    assert issubclass(errors.SymbolicValueError, torch.onnx.errors.SymbolicValueError)
    for cls in (errors.CheckerError, errors.UnsupportedOperatorError, errors.SymbolicValueError,
                errors.InvalidArgumentError, errors.ExportIOError):
        assert issubclass(cls, errors.OnnxExporterError)
        assert issubclass(cls, RuntimeError)
    assert torchonnx.CheckerError is errors.CheckerError


def test_unsupported_operator_names_every_op_with_location():
    with pytest.raises(errors.UnsupportedOperatorError) as e:
        torchonnx.export(Lgamma(), torch.rand(3), io.BytesIO())
    msg = str(e.value)
    assert e.value.code == 4
    assert "aten::lgamma (2 nodes)" in msg and "aten::digamma" in msg
    assert "opset 17" in msg
    assert "test_errors.py:" in msg  # the source line of the model's forward
    # torch.onnx's class catches it.
    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError):
        torchonnx.export(Lgamma(), torch.rand(3), io.BytesIO())


def test_op_from_a_higher_opset():
    class Det(nn.Module):
        def forward(self, x):
            return torch.linalg.det(x)

    with pytest.raises(errors.UnsupportedOperatorError, match=r"aten::linalg_det.*from opset 11"):
        torchonnx.export(Det(), torch.randn(3, 3), io.BytesIO(), opset_version=9)


def test_invalid_opset_is_a_value_error():
    with pytest.raises(ValueError, match="opset 99 is out of range") as e:
        torchonnx.export(nn.ReLU(), torch.randn(2), io.BytesIO(), opset_version=99)
    assert isinstance(e.value, errors.InvalidArgumentError) and e.value.code == 2
    with pytest.raises(errors.InvalidArgumentError, match="no int"):
        torchonnx.export(nn.ReLU(), torch.randn(2), io.BytesIO(), opset_version="17")


def test_dynamic_axes_errors():
    # A key that names no input or output is warned about (on stderr), as torch.onnx warns.
    f = io.BytesIO()
    torchonnx.export(nn.ReLU(), torch.randn(2), f, input_names=["input"],
                     dynamic_axes={"imput": [0]})
    assert f.getvalue()
    with pytest.raises(errors.InvalidArgumentError, match="axis 2 does not exist"):
        torchonnx.export(nn.ReLU(), torch.randn(2, 3), io.BytesIO(), input_names=["x"],
                         dynamic_axes={"x": [2]})
    with pytest.raises(errors.InvalidArgumentError, match="list of axes or a dict"):
        torchonnx.export(nn.ReLU(), torch.randn(2), io.BytesIO(), dynamic_axes={"x": 0})


def test_duplicate_names():
    class Two(nn.Module):
        def forward(self, a, b):
            return a + b

    with pytest.raises(errors.InvalidArgumentError, match="'a' is used twice"):
        torchonnx.export(Two(), (torch.randn(2), torch.randn(2)), io.BytesIO(),
                         input_names=["a", "a"])


def test_modules_as_functions_below_opset_15():
    with pytest.raises(errors.InvalidArgumentError, match="opset_version 9 < 15"):
        torchonnx.export(nn.ReLU(), torch.randn(2), io.BytesIO(), opset_version=9,
                         export_modules_as_functions={nn.ReLU})


def test_write_to_missing_folder_is_an_os_error(tmp_path):
    target = tmp_path / "no" / "such" / "m.onnx"
    with pytest.raises(OSError, match="does not exist") as e:
        torchonnx.export(nn.ReLU(), torch.randn(2), target)
    assert isinstance(e.value, errors.ExportIOError) and e.value.code == 7
    assert not target.parent.exists()


def test_failed_export_leaves_no_file(tmp_path):
    target = tmp_path / "m.onnx"
    with pytest.raises(errors.UnsupportedOperatorError):
        torchonnx.export(Lgamma(), torch.rand(3), target)
    assert os.listdir(tmp_path) == []


def test_keyword_arguments_errors():
    class M(nn.Module):
        def forward(self, x, y):
            return x + y

    with pytest.raises(errors.InvalidArgumentError, match="'z', which is no argument"):
        torchonnx.export(M(), (torch.randn(2), {"y": torch.randn(2), "z": 1}), io.BytesIO())
    with pytest.raises(errors.InvalidArgumentError, match="argument 'y' has no default"):
        torchonnx.export(M(), (torch.randn(2), {}), io.BytesIO())


def test_model_and_f_types():
    with pytest.raises(errors.InvalidArgumentError, match="model must be a torch.nn.Module"):
        torchonnx.export(lambda x: x, torch.randn(2), io.BytesIO())
    with pytest.raises(errors.InvalidArgumentError, match="f must be a file path"):
        torchonnx.export(nn.ReLU(), torch.randn(2), 42)
    with pytest.raises(errors.InvalidArgumentError, match="dynamo"):
        torchonnx.export(nn.ReLU(), torch.randn(2), io.BytesIO(), dynamo=True)
    with pytest.raises(errors.InvalidArgumentError, match="dynamic_axes"):
        torchonnx.export(nn.ReLU(), torch.randn(2), io.BytesIO(), dynamic_shapes={"x": {0: "n"}})


def test_script_module_argument_type():
    scripted = torch.jit.script(nn.Linear(2, 2))
    with pytest.raises(errors.InvalidArgumentError, match="cannot be passed as .*'input' of type Tensor"):
        torchonnx.export(scripted, ("text",), io.BytesIO())


def test_forward_failing_while_tracing_raises_the_models_error():
    # As torch.onnx: the model's own exception, from its forward.
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        torchonnx.export(nn.Linear(4, 3), torch.randn(2, 5), io.BytesIO())


class _IgnoredForward(torch.jit.ScriptModule):
    @torch.jit.ignore
    def forward(self, x):
        return torch.neg(x)


class _CallsIgnoredForward(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.mod = _IgnoredForward()

    @torch.jit.script_method
    def forward(self, x):
        y = self.mod(x)
        return y + y


def test_python_method_of_a_scripted_module_is_named_as_torch_onnx_names_it():
    # A @torch.jit.ignore'd forward is a Python call in the scripted graph: torch.onnx's words
    # ("Couldn't export Python operator"), then where and the remedy.
    with pytest.raises(RuntimeError, match="Couldn't export Python operator forward") as e:
        torchonnx.export(_CallsIgnoredForward(), (torch.zeros(1, 2, 3),), io.BytesIO())
    assert "test_errors.py" in str(e.value)
    assert "Remedy:" in str(e.value)
