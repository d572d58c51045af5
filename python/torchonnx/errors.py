"""The exceptions torchonnx raises: torch.onnx.errors' classes, with torchonnx's messages.

Each class derives from torch.onnx's class of the same name, so that code written for torch.onnx
(``except torch.onnx.errors.CheckerError``) catches torchonnx's errors too. Every error the C++
core raises (a ``torchonnx::ExportError``) arrives as one of these, chosen by its code, with the
code as ``.code`` (the CLI's exit codes: README "Errors"):

====  ============================================  =============================================
code  meaning                                       class
====  ============================================  =============================================
2     invalid argument (option, inputs, names)      InvalidArgumentError (also a ``ValueError``)
3     model cannot be loaded / custom op missing    OnnxExporterError
4     operators without a converter                 UnsupportedOperatorError
5     a converter rejected a node                   SymbolicValueError
6     the model fails onnx's checker                CheckerError
7     reading or writing a file failed              ExportIOError (also an ``OSError``)
8     the model's forward failed on the inputs      OnnxExporterError
1     internal error (a torchonnx bug)              OnnxExporterError
====  ============================================  =============================================
"""

import torch.onnx.errors as _torch_errors

__all__ = [
    "OnnxExporterError",
    "CheckerError",
    "UnsupportedOperatorError",
    "SymbolicValueError",
    "InvalidArgumentError",
    "ExportIOError",
]


class OnnxExporterError(_torch_errors.OnnxExporterError):
    """Errors raised by the ONNX exporter (torch.onnx.errors.OnnxExporterError)."""

    #: The torchonnx::ErrorCode of the C++ core (the CLI's exit code); 1 when raised in Python.
    code = 1


# torch.onnx 1.13 has errors.CheckerError; torch.onnx 2.6's TorchScript exporter no longer defines
# one (its checker errors are OnnxExporterErrors, which OnnxExporterError derives from already).
_CHECKER_BASES = ((_torch_errors.CheckerError, OnnxExporterError)
                  if hasattr(_torch_errors, "CheckerError") else (OnnxExporterError,))


class CheckerError(*_CHECKER_BASES):
    """The exported model fails onnx's checker or shape inference."""

    code = 6


class UnsupportedOperatorError(_torch_errors.UnsupportedOperatorError, OnnxExporterError):
    """Operators that cannot be exported at the requested opset (all of them, with counts and
    source locations)."""

    code = 4

    def __init__(self, message: str):
        # torch.onnx's constructor builds its message from (domain, op, version, ...); torchonnx's
        # core has its own, which names every unsupported op at once.
        RuntimeError.__init__(self, message)


class SymbolicValueError(_torch_errors.SymbolicValueError, OnnxExporterError):
    """A converter (symbolic function) rejected a node: an argument combination it cannot
    export. The message names the node, its source location and the opset."""

    code = 5

    def __init__(self, message: str):
        # torch.onnx's takes a torch._C.Value; the core's message already describes the node.
        RuntimeError.__init__(self, message)


class InvalidArgumentError(OnnxExporterError, ValueError):
    """An argument of export() is invalid: an option value, the number or types of the example
    inputs, a name in input_names/output_names/dynamic_axes (torch.onnx raises ValueError for most
    of these)."""

    code = 2


class ExportIOError(OnnxExporterError, OSError):
    """Writing the model (or reading a file) failed: missing or read-only folder, full disk."""

    code = 7

    def __init__(self, message: str):
        OSError.__init__(self, message)

    def __str__(self):
        return str(self.args[0]) if self.args else ""


_BY_CODE = {
    2: InvalidArgumentError,
    4: UnsupportedOperatorError,
    5: SymbolicValueError,
    6: CheckerError,
    7: ExportIOError,
}


def _error_class(code: int):
    """The class of the C++ core's ExportError of `code` (called by torchonnx._C)."""
    return _BY_CODE.get(code, OnnxExporterError)
