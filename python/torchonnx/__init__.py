"""torchonnx: torch.onnx's exporter API over torchonnx's C++ exporter.

    import torch, torchvision, torchonnx

    model = torchvision.models.alexnet()
    dummy_input = torch.randn(10, 3, 224, 224)
    torchonnx.export(model, dummy_input, "alexnet.onnx", verbose=True,
                     input_names=["actual_input_1"], output_names=["output1"])

The names, arguments and semantics are torch.onnx's (TorchScript exporter, torch 1.13 and 2.x):
``export``, ``export_to_pretty_string``, ``register_custom_op_symbolic`` (Python symbolic
functions: ``symbolic_helper``), ``select_model_mode_for_export``, ``is_in_onnx_export``,
``enable_log``/``disable_log``/``is_onnx_log_enabled``/``set_log_stream``/``log``,
``TrainingMode``, ``OperatorExportTypes``, ``utils.unconvertible_ops``,
``operators.shape_as_tensor``, the exceptions of ``errors``, and ``verification.verify`` /
``verification.find_mismatch`` (on a build with ONNX Runtime's C++ API). The conversion is the C++
library's (libtorchonnx), the same as its C++ API and its command line run.
"""

from . import _C, errors, operators, symbolic_helper, utils, verification
from ._patch import TorchOnnxPatch, patch_torch_onnx
from .errors import CheckerError, OnnxExporterError, UnsupportedOperatorError
from .symbolic_helper import SymbolicContext
from .utils import (
    OperatorExportTypes,
    TrainingMode,
    export,
    export_to_pretty_string,
    is_in_onnx_export,
    register_custom_op_symbolic,
    select_model_mode_for_export,
    unconvertible_ops,
    unregister_custom_op_symbolic,
)

__version__ = _C.__version__

# torch.autograd.Functions in traced models (prim::PythonOp): their static symbolic method, or
# the function registered for "prim::PythonOp" (symbolic_helper._python_op).
_C.register_custom_op_symbolic("prim::PythonOp", symbolic_helper._python_op, 1)

__all__ = [
    # Modules
    "errors",
    "operators",
    "symbolic_helper",
    "utils",
    "verification",
    # Enums
    "OperatorExportTypes",
    "TrainingMode",
    # Functions
    "export",
    "export_to_pretty_string",
    "is_in_onnx_export",
    "select_model_mode_for_export",
    "unconvertible_ops",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
    "patch_torch_onnx",
    "TorchOnnxPatch",
    "enable_log",
    "disable_log",
    "is_onnx_log_enabled",
    "set_log_stream",
    "log",
    "SymbolicContext",
    # Errors
    "OnnxExporterError",
    "CheckerError",
    "UnsupportedOperatorError",
]


def is_onnx_log_enabled() -> bool:
    """Whether the exporter writes its log (off by default)."""
    return _C.is_onnx_log_enabled()


def enable_log() -> None:
    """Enables the exporter's log: what it captured, the passes, the ops given to the converters
    (with counts), the ONNX graph it made."""
    _C.enable_log()


def disable_log() -> None:
    """Disables the exporter's log."""
    _C.disable_log()


def set_log_stream(stream_name: str = "stdout") -> None:
    """Where the log goes: "stdout" or "stderr" (as torch.onnx.set_log_stream; the process's
    standard streams, written by the C++ core)."""
    if not isinstance(stream_name, str):
        raise errors.InvalidArgumentError(
            f"set_log_stream: stream_name must be 'stdout' or 'stderr', not {stream_name!r}"
        )
    _C.set_log_stream(stream_name)


def log(*args) -> None:
    """Writes the arguments, joined by spaces, as one line to the log when it is enabled."""
    _C.log(" ".join(str(a) for a in args))
