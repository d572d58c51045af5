"""torch.onnx.verification's ``verify`` and ``find_mismatch`` over torchonnx's C++ verify.

    from torchonnx import verification
    verification.verify(model, (x,))                       # AssertionError when outputs differ
    info = verification.find_mismatch(model, (x,))
    if info.has_mismatch():
        info.pretty_print_mismatch()                        # the first TorchScript node that differs

The model is exported by torchonnx with the arguments export() takes, then run in ONNX Runtime
in-process (its C++ API: a build with libonnxruntime-dev, Debian 13) and in libtorch on the same
inputs; the outputs are compared as ``torchonnx verify`` compares them (rtol, and an absolute
tolerance that follows each output's scale; integers exactly). Where torch.onnx compares with
the eager model, torchonnx compares with the TorchScript module it exports (an ``nn.Module`` is
traced first, as export() traces it). On a build without ONNX Runtime's C++ API both raise
``errors.InvalidArgumentError`` saying how to get one; ``verify_available()`` tells beforehand.
"""

import dataclasses
import json
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from . import _C, utils
from .utils import TrainingMode

__all__ = [
    "VerificationOptions",
    "VerificationResult",
    "MismatchInfo",
    "find_mismatch",
    "verify",
    "verify_available",
]


@dataclasses.dataclass
class VerificationOptions:
    """torch.onnx.verification.VerificationOptions: torchonnx reads ``rtol`` and ``atol`` (an
    output's absolute tolerance is at least ``atol``); shapes and dtypes are always checked,
    outputs always flattened, None outputs always dropped, and ONNX Runtime runs on the CPU."""

    flatten: bool = True
    ignore_none: bool = True
    check_shape: bool = True
    check_dtype: bool = True
    backend: Any = None
    rtol: float = 1e-3
    atol: float = 1e-7
    remained_onnx_input_idx: Optional[Sequence[int]] = None
    acceptable_error_percentage: Optional[float] = None


class VerificationResult:
    """What the C++ verify found: ``passed``, ``table`` (as ``torchonnx verify`` prints it),
    ``input_sets`` (per set of inputs, per output: shape, dtype, max abs/rel error, pass) and,
    with find_mismatch, ``mismatch`` (the first node that differs, or None)."""

    def __init__(self, data: Dict[str, Any], table: str):
        self.data = data
        self.table = table
        self.passed: bool = data["pass"]
        self.opset: int = data["opset"]
        self.input_sets: List[Dict[str, Any]] = data["input_sets"]
        self.mismatch: Optional[Dict[str, Any]] = data["mismatch"]
        self.mismatch_note: str = data["mismatch_note"]

    def __repr__(self) -> str:
        return f"VerificationResult(passed={self.passed}, opset={self.opset})"


class MismatchInfo:
    """find_mismatch's answer, with the methods of torch.onnx's GraphInfo a caller uses:
    ``has_mismatch()``, ``pretty_print_mismatch()``; ``mismatch`` is the first TorchScript node
    (in graph order) whose ONNX values differ while the values it reads match: its ``kind``
    ("aten::relu"), ``location`` ("model.py:41"), ``converter``, ``onnx_ops``, ``value`` and
    ``max_abs_error``."""

    def __init__(self, result: VerificationResult):
        self.result = result
        self.mismatch = result.mismatch

    def has_mismatch(self) -> bool:
        return not self.result.passed

    def pretty_print_mismatch(self, graph: bool = False, file=None) -> None:
        out = file if file is not None else sys.stdout
        out.write(self.result.table)

    def __repr__(self) -> str:
        if self.mismatch:
            return f"MismatchInfo({self.mismatch['message']})"
        return f"MismatchInfo(has_mismatch={self.has_mismatch()})"


def verify_available() -> bool:
    """Whether this build runs ONNX Runtime in-process (verify and find_mismatch work)."""
    return _C.verify_available()


def _tolerances(options: Optional[VerificationOptions], rtol, atol) -> Tuple[float, float]:
    if options is not None:
        rtol, atol = options.rtol, options.atol
    return (1e-3 if rtol is None else rtol), (1e-5 if atol is None else atol)


def _more_args(model, extra) -> List[List[Any]]:
    """The argument sets of additional_test_inputs, as the prepared module takes them."""
    out = []
    for args in extra or ():
        args = utils._args_tuple(args)
        if isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
            schema = model.schema if isinstance(model, torch.jit.ScriptFunction) else (
                model._c._get_method("forward").schema)
            params = utils._schema_params(
                schema, skip_self=not isinstance(model, torch.jit.ScriptFunction))
            out.append(list(utils._decide_input_format(params, args)))
        else:
            args = utils._decide_input_format(utils._python_params(model.forward), args)
            out.append(list(utils._flatten_inputs(args)[0]))
    return out


def _run_verify(model, input_args, input_kwargs, find, rtol, atol, additional_test_inputs,
                **export_kwargs) -> VerificationResult:
    training = export_kwargs.pop("training", TrainingMode.EVAL)
    options = utils._export_options(model, training=training, **export_kwargs)
    options.drop_unused_inputs = False  # verify feeds one input per flattened argument
    options.strip_doc_string = False  # the report names the source line of a node that differs
    _C.check_export_options(options)
    args = utils._args_tuple(input_args, input_kwargs)
    more = _more_args(model, additional_test_inputs)

    def run(p: "utils._Prepared"):
        return _C.verify_module(p.module, list(p.args), options, rtol, atol, find, more)

    with torch.no_grad():
        data, table = utils._run(model, args, training, run)
    return VerificationResult(json.loads(data), table)


def verify(
    model: Union[torch.nn.Module, torch.jit.ScriptModule],
    input_args: Union[torch.Tensor, Tuple[Any, ...]],
    input_kwargs: Optional[Mapping[str, Any]] = None,
    do_constant_folding: bool = True,
    dynamic_axes: Optional[Mapping[str, Any]] = None,
    input_names: Optional[Sequence[str]] = None,
    output_names: Optional[Sequence[str]] = None,
    training: TrainingMode = TrainingMode.EVAL,
    opset_version: Optional[int] = None,
    keep_initializers_as_inputs: bool = True,
    verbose: bool = False,
    fixed_batch_size: bool = False,
    use_external_data: bool = False,
    additional_test_inputs: Optional[Sequence[Union[torch.Tensor, Tuple[Any, ...]]]] = None,
    options: Optional[VerificationOptions] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    **_,
) -> VerificationResult:
    """torch.onnx.verification.verify: exports ``model`` with torchonnx, runs it in ONNX Runtime
    and in libtorch on ``input_args`` (and on each of ``additional_test_inputs``; with
    ``dynamic_axes`` and none given, also on the example with every dynamic axis grown) and
    raises AssertionError, with the comparison table, when an output differs. Tolerances come
    from ``options`` (torch 2's VerificationOptions) or ``rtol``/``atol`` (torch 1.13's
    arguments). Returns the result (torch.onnx returns None)."""
    rtol, atol = _tolerances(options, rtol, atol)
    result = _run_verify(
        model, input_args, input_kwargs, False, rtol, atol, additional_test_inputs,
        training=training, do_constant_folding=do_constant_folding, dynamic_axes=dynamic_axes,
        input_names=input_names, output_names=output_names, opset_version=opset_version,
        keep_initializers_as_inputs=keep_initializers_as_inputs, verbose=verbose,
        use_external_data_format=use_external_data)
    if not result.passed:
        raise AssertionError("ONNX Runtime's outputs differ from libtorch's:\n" + result.table)
    return result


def find_mismatch(
    model: Union[torch.nn.Module, torch.jit.ScriptModule],
    input_args: Tuple[Any, ...],
    do_constant_folding: bool = True,
    training: TrainingMode = TrainingMode.EVAL,
    opset_version: Optional[int] = None,
    keep_initializers_as_inputs: bool = True,
    verbose: bool = False,
    options: Optional[VerificationOptions] = None,
) -> MismatchInfo:
    """torch.onnx.verification.find_mismatch: exports and compares as verify() does and, when an
    output differs, finds the first TorchScript node whose conversion is wrong (its ONNX values
    differ from libtorch's while the values it reads match). Never raises for a mismatch."""
    rtol, atol = _tolerances(options, None, None)
    result = _run_verify(
        model, input_args, None, True, rtol, atol, None, training=training,
        do_constant_folding=do_constant_folding, opset_version=opset_version,
        keep_initializers_as_inputs=keep_initializers_as_inputs, verbose=verbose)
    return MismatchInfo(result)
