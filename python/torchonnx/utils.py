"""torch.onnx.utils' functions, over torchonnx's C++ core (torchonnx._C).

What happens in Python is what torch.onnx does in Python before its C++ passes: the argument forms
of ``args`` (a tensor, a tuple, nested tuples and lists, a trailing dict of keyword arguments,
numbers), the training mode, and tracing an ``nn.Module`` into a TorchScript module
(``torch.jit.trace``, as torch.onnx's ``torch.jit._get_trace_graph``). Everything after — the
passes, the converters, the ONNX model, its checks and the file — is the C++ library's, the same
code as the C++ API and the CLI run.
"""

import contextlib
import copy
import importlib
import inspect
import itertools
import os
import threading
import warnings
from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence, Tuple, Type, Union

import torch
from torch._C import _onnx as _C_onnx

from . import _C, errors, symbolic_helper

__all__ = [
    "TrainingMode",
    "OperatorExportTypes",
    "export",
    "export_to_pretty_string",
    "is_in_onnx_export",
    "select_model_mode_for_export",
    "unconvertible_ops",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
]

# torch.onnx's own enums, so that torch.onnx.TrainingMode.EVAL and torchonnx.TrainingMode.EVAL are
# the same value.
TrainingMode = _C_onnx.TrainingMode
OperatorExportTypes = _C_onnx.OperatorExportTypes

# --------------------------------------------------------------------------------------------
# Export state: is_in_onnx_export


class _ExportState(threading.local):
    depth = 0


_state = _ExportState()


def is_in_onnx_export() -> bool:
    """True while torchonnx exports on this thread: also inside the model's forward while it is
    traced (so a model can branch on it, as torch.onnx documents) and during conversion."""
    return _state.depth > 0 or _C.is_in_onnx_export()


def _torch_onnx_globals():
    """torch.onnx's export state, which its is_in_onnx_export() reads: torch.onnx._globals up to
    torch 2.8, torch.onnx._internal.torchscript_exporter._globals since (torch 2.14 has it there)."""
    for module in ("torch.onnx._internal.torchscript_exporter._globals", "torch.onnx._globals"):
        try:
            GLOBALS = importlib.import_module(module).GLOBALS
        except (ImportError, AttributeError):
            continue
        if hasattr(GLOBALS, "in_onnx_export"):
            return GLOBALS
    return None


@contextlib.contextmanager
def _exporting():
    """Marks this thread as exporting. torch.onnx.is_in_onnx_export() answers True too while the
    model is traced, so that model code written for torch.onnx takes its export branch."""
    torch_globals = _torch_onnx_globals()
    previous = torch_globals.in_onnx_export if torch_globals is not None else None
    _state.depth += 1
    if torch_globals is not None:
        torch_globals.in_onnx_export = True
    try:
        yield
    finally:
        _state.depth -= 1
        if torch_globals is not None:
            torch_globals.in_onnx_export = previous


# --------------------------------------------------------------------------------------------
# Training mode


def _training_mode(training) -> "TrainingMode":
    if isinstance(training, TrainingMode):
        return training
    if isinstance(training, bool):  # the API before torch 1.9 took a bool
        return TrainingMode.TRAINING if training else TrainingMode.EVAL
    if isinstance(training, _C.TrainingMode):
        return TrainingMode.__members__[training.name]
    raise errors.InvalidArgumentError(
        f"training={training!r} is no torch.onnx.TrainingMode: pass TrainingMode.EVAL, "
        "TrainingMode.PRESERVE or TrainingMode.TRAINING"
    )


@contextlib.contextmanager
def select_model_mode_for_export(model, mode: "TrainingMode"):
    """A context manager that sets the training mode of ``model`` to ``mode`` (EVAL: eval(),
    TRAINING: train(), PRESERVE: unchanged) and restores the model's mode at the exit of the
    with-block, as torch.onnx.select_model_mode_for_export."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(
            f"'mode' should be a torch.onnx.TrainingMode enum, but got '{type(mode)}'."
        )
    originally_training = False
    if hasattr(model, "training"):
        originally_training = model.training
        if mode == TrainingMode.TRAINING:
            model.train(True)
        elif mode == TrainingMode.EVAL:
            model.train(False)
    try:
        yield
    finally:
        if hasattr(model, "training") and mode != TrainingMode.PRESERVE:
            model.train(originally_training)


# --------------------------------------------------------------------------------------------
# Arguments


def _args_tuple(args, kwargs=None) -> Tuple[Any, ...]:
    """``args`` as torch.onnx takes it: a tuple (or list) of arguments, or one argument; the
    keyword arguments of torch 2's ``kwargs=`` become the trailing dict."""
    if isinstance(args, (tuple, list)):
        out = tuple(args)
    else:
        out = (args,)
    if kwargs:
        if out and isinstance(out[-1], dict):
            raise errors.InvalidArgumentError(
                "export: keyword arguments are given both as kwargs= and as the trailing dict of "
                "args; give them once"
            )
        out = out + (dict(kwargs),)
    return out


class _Param:
    def __init__(self, name, has_default, default, optional=False):
        self.name, self.has_default, self.default = name, has_default, default
        self.optional = optional  # a TorchScript argument of an Optional type


def _python_params(fn) -> Optional[List[_Param]]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            break
        params.append(_Param(p.name, p.default is not p.empty, p.default))
    return params


def _schema_params(schema, skip_self: bool) -> List[_Param]:
    arguments = list(schema.arguments)[1 if skip_self else 0 :]
    return [
        _Param(a.name, a.has_default_value(), a.default_value,
               isinstance(a.type, torch._C.OptionalType))
        for a in arguments
    ]


def _decide_input_format(params: Optional[List[_Param]], args: Tuple[Any, ...],
                         scripted: bool = False) -> Tuple[Any, ...]:
    """torch.onnx's rule: a trailing dict holds keyword arguments; the arguments after the
    positional ones are taken from it by name, or else from their defaults (also without a dict).
    A model whose last argument is a dict is exported with an empty dict after it.

    Note [Optional arguments of a scripted model]
    For a ScriptModule or ScriptFunction (`scripted`), an argument of an Optional type that is not
    given is None, not its default: torch.onnx makes it an optional graph input that the exported
    model's caller leaves out, which ONNX takes as None (ONNX has no default values; PyTorch's
    test_all_optional_default_tensor_script says so). Here that None is a constant of the graph,
    and the branches it decides fold. None given in args is refused as torch.onnx refuses it
    (_check_flatten_did_not_remove), except for an argument whose default is None: passing its
    default is what leaving it out does (a transducer's `state: Optional[...] = None`)."""
    positional = list(args)
    kwargs: Dict[str, Any] = {}
    has_dict = bool(positional) and isinstance(positional[-1], dict)
    if has_dict:
        kwargs = dict(positional.pop())
    if params is None:
        if kwargs:
            raise errors.InvalidArgumentError(
                "export: keyword arguments were given, but the signature of the model's forward "
                "cannot be read to place them"
            )
        return tuple(positional)
    given = list(zip(params, positional))  # (param, the value the caller gave)
    for p in params[len(positional) :]:
        if p.name in kwargs:
            given.append((p, kwargs[p.name]))
            positional.append(kwargs.pop(p.name))
        elif scripted and p.optional:
            positional.append(None)
        elif p.has_default:
            positional.append(p.default)
        elif has_dict:
            raise errors.InvalidArgumentError(
                f"export: forward()'s argument '{p.name}' has no default and is not among the "
                "keyword arguments of args' trailing dict "
                f"({', '.join(map(repr, args[-1])) or 'empty'}): give it positionally or in the dict"
            )
        else:
            break  # too few arguments: the model's own error says which
    if scripted:
        _check_no_none(given)
    if kwargs:
        names = [p.name for p in params]
        raise errors.InvalidArgumentError(
            f"export: the trailing dict of args names {', '.join(map(repr, kwargs))}, which "
            f"{'is no argument' if len(kwargs) == 1 else 'are no arguments'} of forward() "
            f"(its arguments: {', '.join(names)}). If forward()'s last argument is a dict, end "
            "args with an empty dict: (x, {'key': value}, {})"
        )
    return tuple(positional)


def _check_no_none(given: List[Tuple[_Param, Any]]) -> None:
    """torch.onnx's refusal of None in the arguments of a scripted model, in its words (Note
    [Optional arguments of a scripted model])."""

    def count(a) -> int:
        if a is None:
            return 1
        if isinstance(a, (list, tuple)):
            return sum(count(x) for x in a)
        if isinstance(a, dict):
            return sum(count(x) for x in a.values())
        return 0

    n = sum(
        count(a) for p, a in given
        if not (a is None and p.has_default and p.default is None)
    )
    if n:
        raise ValueError(
            f"args contained {n} None's after flattening. When exporting a ScriptModule or "
            "ScriptFunction, no args may be None because that breaks type propagation. "
            "Remedy: leave an Optional argument out (pass the ones after it by name, in a "
            "trailing dict) to export it as None"
        )


class _Leaf:
    """The place of the k-th traced tensor in the arguments' structure."""

    def __init__(self, k: int):
        self.k = k


def _flatten_inputs(args: Tuple[Any, ...]):
    """The arguments as torch.onnx traces them (torch.jit._flatten): their tensors in order — of
    nested tuples, lists and dicts (a tensor key before its value); numbers (int, float, bool) as
    0-d tensors, which become graph inputs as torch.onnx makes them — and the structure to
    rebuild the arguments from the traced tensors (None and strings stay as they are)."""
    leaves: List[torch.Tensor] = []

    def leaf(t: torch.Tensor) -> _Leaf:
        leaves.append(t)
        return _Leaf(len(leaves) - 1)

    def walk(a):
        if isinstance(a, torch.Tensor):
            return leaf(a)
        if isinstance(a, bool):
            return leaf(torch.tensor(a))
        if isinstance(a, int):
            return leaf(torch.tensor(a, dtype=torch.int64))
        if isinstance(a, float):
            return leaf(torch.tensor(a, dtype=torch.float64))
        if isinstance(a, tuple):
            items = [walk(x) for x in a]
            return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
        if isinstance(a, list):
            return [walk(x) for x in a]
        if isinstance(a, dict):
            # A tensor key is traced too, before its value, as torch.jit._flatten walks a
            # dict's (key, value) items: it is a graph input where the model reads it.
            return {(walk(k) if isinstance(k, torch.Tensor) else k): walk(v)
                    for k, v in a.items()}
        if a is None or isinstance(a, str):
            return a
        raise errors.InvalidArgumentError(
            f"export: an argument of type {type(a).__name__} cannot be an input of a traced "
            "model: only tensors, numbers, strings, None, and tuples, lists and dicts of them"
        )

    template = tuple(walk(a) for a in args)
    return tuple(leaves), template


def _rebuild(template, leaves):
    if isinstance(template, _Leaf):
        return leaves[template.k]
    if isinstance(template, tuple):
        items = [_rebuild(x, leaves) for x in template]
        return type(template)(*items) if hasattr(template, "_fields") else tuple(items)
    if isinstance(template, list):
        return [_rebuild(x, leaves) for x in template]
    if isinstance(template, dict):
        return {(_rebuild(k, leaves) if isinstance(k, _Leaf) else k): _rebuild(v, leaves)
                for k, v in template.items()}
    return template


# --------------------------------------------------------------------------------------------
# Options


def _opset(opset_version) -> int:
    if opset_version is None:
        return _C.DEFAULT_OPSET
    if isinstance(opset_version, bool) or not isinstance(opset_version, int):
        raise errors.InvalidArgumentError(
            f"opset_version={opset_version!r} is no int: pass an opset from {_C.MIN_OPSET} to "
            f"{_C.highest_opset()}"
        )
    return opset_version


def _operator_export_type(value) -> "_C.OperatorExportType":
    name = getattr(value, "name", value)
    if isinstance(name, str) and name in _C.OperatorExportType.__members__:
        return _C.OperatorExportType.__members__[name]
    raise errors.InvalidArgumentError(
        f"operator_export_type={value!r} is no torch.onnx.OperatorExportTypes: pass ONNX, "
        "ONNX_ATEN, ONNX_ATEN_FALLBACK or ONNX_FALLTHROUGH"
    )


def _dynamic_axes(dynamic_axes) -> Dict[str, Dict[int, str]]:
    """torch.onnx's two forms: {name: {axis: label}} and {name: [axis, ...]} (labels generated:
    '<name>_dynamic_axes_<k>')."""
    if dynamic_axes is None:
        return {}
    if not isinstance(dynamic_axes, Mapping):
        raise errors.InvalidArgumentError(
            f"dynamic_axes must be a dict of input/output names, not {type(dynamic_axes).__name__}"
        )
    out: Dict[str, Dict[int, str]] = {}
    for name, axes in dynamic_axes.items():
        if not isinstance(name, str):
            raise errors.InvalidArgumentError(
                f"dynamic_axes: key {name!r} is no input or output name (a str)"
            )
        if isinstance(axes, Mapping):
            items = list(axes.items())
        elif isinstance(axes, (list, tuple)):
            items = [(axis, "") for axis in axes]
        else:
            raise errors.InvalidArgumentError(
                f"dynamic_axes['{name}'] must be a list of axes or a dict axis -> name, not "
                f"{type(axes).__name__}"
            )
        resolved: Dict[int, str] = {}
        for axis, label in items:
            if isinstance(axis, bool) or not isinstance(axis, int):
                raise errors.InvalidArgumentError(
                    f"dynamic_axes['{name}']: axis {axis!r} is no int"
                )
            if not isinstance(label, str):
                raise errors.InvalidArgumentError(
                    f"dynamic_axes['{name}'][{axis}]: the axis name {label!r} is no str"
                )
            if axis in resolved:
                warnings.warn(f"dynamic_axes['{name}'] names axis {axis} twice; the last name is used")
            resolved[axis] = label
        out[name] = resolved
    return out


def _class_name(cls) -> str:
    """TorchScript's name of an nn.Module class ("__torch__.torch.nn.modules.linear.Linear")."""
    try:
        return torch._jit_internal._qualified_name(cls)
    except Exception:
        return torch.typename(cls)


def _modules_as_functions(model, value) -> set:
    """export_modules_as_functions: False, True (every module type of the model) or a collection
    of nn.Module types (or their qualified names)."""
    if value is False or value is None:
        return set()
    if value is True:
        return {"*"}  # the core's "every module type the graph calls" (ExportOptions)
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise errors.InvalidArgumentError(
            "export_modules_as_functions must be a bool or a collection of nn.Module types, not "
            f"{type(value).__name__}"
        )
    names = set()
    for t in value:
        if isinstance(t, type):
            names.add(_class_name(t))
        elif isinstance(t, str):
            names.add(t)
        else:
            raise errors.InvalidArgumentError(
                f"export_modules_as_functions: {t!r} is no nn.Module type"
            )
    return names


def _annotated_value(value):
    """An annotated module attribute's value as a function attribute (None: it has no ONNX form;
    torch.onnx keeps tensors, numbers, str and lists of numbers, not tuples)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, str)):
        return value
    if isinstance(value, list) and value:
        if all(isinstance(v, (bool, int)) for v in value):
            return [int(v) for v in value]
        if all(isinstance(v, float) for v in value):
            return list(value)
    return None


def _module_attributes(model: torch.nn.Module) -> Dict[str, Tuple[str, List[Tuple[str, Any]]]]:
    """export_modules_as_functions: each module's annotated attributes (`num_layers: int` in
    its class, nn.Module's own left out) and their values, by module path, as torch.onnx records
    them on the function calls (utils._get_module_attributes). An annotated attribute the instance
    does not set (Embedding's `freeze`) is skipped."""
    import typing

    try:
        base = set(typing.get_type_hints(torch.nn.Module))
    except Exception:
        base = set(getattr(torch.nn.Module, "__annotations__", {}))
    out = {}
    for path, module in model.named_modules():
        cls = type(module)
        try:
            names = [k for k in typing.get_type_hints(cls) if k not in base]
        except Exception:  # an annotation that does not evaluate: the class's own names
            names = [k for k in getattr(cls, "__annotations__", {}) if k not in base]
        attributes = []
        for name in names:
            try:
                value = _annotated_value(getattr(module, name))
            except AttributeError:
                continue
            if value is not None:
                attributes.append((name, value))
        out[path] = (torch.typename(cls), attributes)
    return out


def _export_options(
    model,
    export_params=True,
    verbose=False,
    training=TrainingMode.EVAL,
    input_names=None,
    output_names=None,
    operator_export_type=OperatorExportTypes.ONNX,
    opset_version=None,
    do_constant_folding=True,
    dynamic_axes=None,
    keep_initializers_as_inputs=None,
    custom_opsets=None,
    export_modules_as_functions=False,
    use_external_data_format=False,
) -> "_C.ExportOptions":
    if isinstance(model, torch.nn.DataParallel):
        # torch.onnx's own words (its tests match them), with the remedy.
        raise errors.InvalidArgumentError(
            "torch.nn.DataParallel is not supported by ONNX exporter, please use 'attribute' "
            "module to unwrap model from torch.nn.DataParallel. Try torchonnx.export(model.module, "
            "...)"
        )
    o = _C.ExportOptions()
    o.export_params = bool(export_params)
    o.verbose = bool(verbose)
    # torch.onnx writes the nodes' doc_strings (op and source line) only with verbose=True.
    o.strip_doc_string = not o.verbose
    o.training = _C.TrainingMode.__members__[_training_mode(training).name]
    for what, names in (("input_names", input_names), ("output_names", output_names)):
        if names is None:
            continue
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise errors.InvalidArgumentError(f"{what} must be a list of str, not {names!r}")
        setattr(o, what, list(names))
    o.operator_export_type = _operator_export_type(operator_export_type)
    o.opset_version = _opset(opset_version)
    o.do_constant_folding = bool(do_constant_folding)
    o.dynamic_axes = _dynamic_axes(dynamic_axes)
    if keep_initializers_as_inputs is None:
        # torch.onnx: initializers are inputs too for every export type but ONNX.
        keep_initializers_as_inputs = o.operator_export_type != _C.OperatorExportType.ONNX
    o.keep_initializers_as_inputs = bool(keep_initializers_as_inputs)
    # torch.onnx removes the inputs the exported graph does not read (one used only for its static
    # shape); callers feed the remaining ones (PyTorch's tests say which remain).
    o.drop_unused_inputs = True
    if custom_opsets is not None:
        if not isinstance(custom_opsets, Mapping) or not all(
            isinstance(k, str) and isinstance(v, int) for k, v in custom_opsets.items()
        ):
            raise errors.InvalidArgumentError(
                f"custom_opsets must be a dict domain (str) -> version (int), not {custom_opsets!r}"
            )
        o.custom_opsets = dict(custom_opsets)
    o.export_modules_as_functions = _modules_as_functions(model, export_modules_as_functions)
    if o.export_modules_as_functions and isinstance(model, torch.nn.Module):
        o.set_module_attributes(_module_attributes(model))
    o.use_external_data_format = bool(use_external_data_format)
    return o


# --------------------------------------------------------------------------------------------
# The model


class _Prepared:
    """The model as the core takes it: a torch._C.ScriptModule and its example arguments."""

    def __init__(self, module, args):
        self.module, self.args = module, args
        self.unit = None  # a traced module's compilation unit, kept alive with it


_function_modules = itertools.count()


def _function_module(function: torch.jit.ScriptFunction) -> torch.jit.ScriptModule:
    """A ScriptModule whose forward calls `function` with forward's arguments: the core exports
    modules, whose arguments become graph inputs (numbers too), and inlines the call with its
    loops and branches."""
    arguments = list(function.schema.arguments)
    params = ", ".join(f"{a.name}: {a.type.annotation_str}" for a in arguments)
    names = ", ".join(a.name for a in arguments)
    # A class of its own per call: the TorchScript type is named after the Python class, and a
    # second forward defined on one type fails ("Can't redefine method: forward").
    cls = type(f"_FunctionModule{next(_function_modules)}", (torch.jit.ScriptModule,),
               {"__module__": __name__})
    module = cls()
    inner = module._actual_script_module
    inner._c._define(
        inner._concrete_type,
        f"def forward(self, {params}):\n    return __torchonnx_function({names})\n",
        lambda name: function if name == "__torchonnx_function" else None,
    )
    return module


def _run_once(model: torch.jit.ScriptModule, args: Tuple[Any, ...]) -> None:
    """Note [A scripted model runs once]: torch.onnx runs a ScriptModule once on (a deep copy of)
    the example arguments, in the training mode it exports, to learn its outputs
    (torch.onnx.utils._get_example_outputs), as tracing runs an nn.Module once. What that run
    changes in the module's state is in the file torch.onnx writes: in training mode the
    BatchNorm running statistics after one step (not a fresh layer's 0 and 1). torchonnx runs it
    the same way, before the core reads the module, so that both exporters write the same
    initializers. (A fresh BatchNorm's 0 and 1 are also what ONNX Runtime's constant sharing
    merges with the weight and bias of other layers, which its training-mode
    BatchNormalization then overwrites.) torch.onnx holds the module's tensors before the run, so
    it writes what the run changed in place (x.add_(...)) but not what it assigned anew
    (self.conv.bias = anchors + b): the attributes the run reassigned are set back. A run that
    fails is left to the export, whose error names the argument or the node (an argument of the
    wrong type, an op it cannot convert)."""
    before = _attribute_values(model._c)
    try:
        model(*copy.deepcopy(args))
    except Exception:  # noqa: BLE001 - the export reports what is wrong, in its own words
        pass
    finally:
        for module, name, value in before:
            try:
                module.setattr(name, value)
            except RuntimeError:  # an attribute TorchScript does not let Python set: as run
                pass


def _attribute_values(module) -> List[Tuple[Any, str, Any]]:
    """(module, name, value) of every attribute of a torch._C.ScriptModule and of its submodules,
    except the submodules themselves."""
    out = []
    for name, value in torch._C._jit_debug_module_iterators(module)["named_attributes"]:
        if isinstance(value, torch._C.ScriptModule):
            out.extend(_attribute_values(value))
        else:
            out.append((module, name, value))
    return out


def _prepare(model, args: Tuple[Any, ...], training: "TrainingMode") -> _Prepared:
    """Call inside _exporting() and select_model_mode_for_export(model, training): traces an
    nn.Module in the mode it is in."""
    if isinstance(model, torch.jit.ScriptFunction):
        args = _decide_input_format(_schema_params(model.schema, skip_self=False), args,
                                    scripted=True)
        return _Prepared(_function_module(model)._c, args)
    if isinstance(model, torch.jit.ScriptModule):
        try:
            schema = model._c._get_method("forward").schema
        except RuntimeError as e:
            raise errors.InvalidArgumentError(
                "the ScriptModule has no forward() method to export"
            ) from e
        args = _decide_input_format(_schema_params(schema, skip_self=True), args, scripted=True)
        _run_once(model, args)
        return _Prepared(model._c, args)
    if not isinstance(model, torch.nn.Module):
        raise errors.InvalidArgumentError(
            f"export: model must be a torch.nn.Module, a torch.jit.ScriptModule or a "
            f"torch.jit.ScriptFunction, not {type(model).__name__}"
        )
    args = _decide_input_format(_python_params(model.forward), args)
    leaves, template = _flatten_inputs(args)
    # As torch.onnx traces (torch.jit._get_trace_graph): one run, no check run, the inputs and
    # outputs flattened. The tracer records a shallow copy of the model whose forward takes the
    # flat tensors and flattens its outputs (the same parameters, submodules, hooks and class:
    # initializers keep their state_dict names and module types their names).
    flat = copy.copy(model)
    flat.forward = _FlatForward(flat.forward, template)
    with _private_script_types() as unit:
        traced = torch.jit.trace(flat, leaves, check_trace=False, strict=False,
                                 _compilation_unit=unit)
    prepared = _Prepared(traced._c, leaves)
    prepared.unit = unit  # the types' methods live in it (a type holds its unit weakly)
    return prepared


@contextlib.contextmanager
def _private_script_types():
    """torch.jit.trace(module) gives the model and each submodule a TorchScript type, named after
    its class in torch.jit's compilation unit and recorded in torch.jit's store of types; torch.onnx
    traces with torch.jit._get_trace_graph, which creates none. Types left there change what the
    user's later torch.jit.script() makes: an equal module reuses the traced type, and a new type
    of the same class gets a mangled name ("container.___torch_mangle_3.ModuleList"), which loses
    the instance names torch.onnx gives a scripted model's node scopes (its ModuleList check
    compares the unmangled name: PyTorch's test_node_scope saw "0" for "lns.0" after a traced
    export of LayerNorms in a ModuleList). The trace gets a compilation unit of its own (yielded:
    the caller keeps it alive with the traced module) and the store is restored after it."""
    import torch.jit._state as jit_state

    store = torch.jit._recursive.concrete_type_store
    types = {k: list(v) for k, v in store.type_store.items()}
    compiled = set(store.methods_compiled)
    shared_unit = jit_state._python_cu
    unit = torch._C.CompilationUnit()
    jit_state._python_cu = unit
    try:
        yield unit
    finally:
        jit_state._python_cu = shared_unit
        store.type_store = types
        store.methods_compiled = compiled


class _FlatForward:
    """forward() as torch.onnx traces it: it takes the arguments' tensors, flattened
    (_flatten_inputs), rebuilds the arguments and returns the outputs flattened as torch.onnx
    flattens them: the tensors of nested tuples, lists and dict values in order, numbers as
    tensors, strings and None dropped. Its signature names the traced tensors after forward()'s
    arguments ("x"; "pair_0", "pair_1" for the tensors of a tuple): the graph's input names."""

    def __init__(self, forward, template: Tuple[Any, ...]):
        self.forward = forward
        self.template = template
        try:
            params = list(inspect.signature(forward).parameters.values())
        except (TypeError, ValueError):
            params = []
        names: List[str] = []
        for i, arg in enumerate(template):
            base = params[i].name if i < len(params) and params[i].kind in (
                inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
            ) else f"input_{i}"
            count = [0]

            def leaves_of(t):
                if isinstance(t, _Leaf):
                    count[0] += 1
                elif isinstance(t, (tuple, list)):
                    for x in t:
                        leaves_of(x)
                elif isinstance(t, dict):
                    for x in t.values():
                        leaves_of(x)

            leaves_of(arg)
            if count[0] == 1 and isinstance(arg, _Leaf):
                names.append(base)
            else:
                names.extend(f"{base}_{k}" for k in range(count[0]))
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])

    def __call__(self, *leaves):
        args = _rebuild(self.template, leaves)
        flat: List[torch.Tensor] = []

        def add(o):
            if isinstance(o, torch.Tensor):
                flat.append(o)
            elif isinstance(o, (tuple, list)):
                for x in o:
                    add(x)
            elif isinstance(o, dict):
                for x in o.values():
                    add(x)
            elif isinstance(o, (bool, int, float)):
                flat.append(torch.tensor(o))
            elif o is None or isinstance(o, str):
                pass
            else:
                raise errors.InvalidArgumentError(
                    f"export: the model returns a {type(o).__name__}, which ONNX cannot output: "
                    "return tensors (in tuples, lists or dicts)"
                )

        add(self.forward(*args))
        return flat[0] if len(flat) == 1 else tuple(flat)


def _run(model, args, training, fn):
    training = _training_mode(training)
    with _exporting(), select_model_mode_for_export(model, training):
        prepared = _prepare(model, args, training)
        symbolic_helper._take_raised()
        try:
            return fn(prepared)
        except errors.OnnxExporterError as e:
            # A Python symbolic raised: its exception goes to the caller as it is (as torch.onnx
            # lets it through), with torchonnx's account of the node as a note.
            raised = symbolic_helper._take_raised()
            if raised is None:
                raise
            if hasattr(raised, "add_note"):
                raised.add_note(f"torchonnx: {e}")
            raise raised from None


# --------------------------------------------------------------------------------------------
# Public functions


def _is_exported_program(model) -> bool:
    export = getattr(torch, "export", None)
    return export is not None and isinstance(model, getattr(export, "ExportedProgram", ()))


def _from_exported_program(program, args, input_names, dynamic_axes):
    """A torch.export program as the ScriptModule torchonnx's C++ reader makes of its .pt2
    (torchonnx::load_exported_program), with the program's example inputs when ``args`` is empty
    and its symbolic dims as dynamic axes when none are given (under ``input_names`` where they
    rename its inputs)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="torchonnx_pt2_") as tmp:
        path = os.path.join(tmp, "program.pt2")
        torch.export.save(program, path)
        cpp, example, program_axes, names, notes = _C.load_exported_program(path)
    for note in notes:
        warnings.warn("torchonnx: " + note)
    module = torch.jit._recursive.wrap_cpp_module(cpp)
    if args is None or (isinstance(args, tuple) and len(args) == 0):
        args = tuple(example)
    if dynamic_axes is None:
        renamed = list(input_names or [])
        dynamic_axes = {}
        for k, name in enumerate(names):
            if name in program_axes:
                dynamic_axes[renamed[k] if k < len(renamed) else name] = dict(program_axes[name])
    return module, args, dynamic_axes


def export(
    model: Union[torch.nn.Module, torch.jit.ScriptModule, torch.jit.ScriptFunction],
    args: Union[Tuple[Any, ...], torch.Tensor] = (),
    f=None,
    export_params: bool = True,
    verbose: bool = False,
    training: "TrainingMode" = TrainingMode.EVAL,
    input_names: Optional[Sequence[str]] = None,
    output_names: Optional[Sequence[str]] = None,
    operator_export_type: "OperatorExportTypes" = OperatorExportTypes.ONNX,
    opset_version: Optional[int] = None,
    do_constant_folding: bool = True,
    dynamic_axes: Optional[
        Union[Mapping[str, Mapping[int, str]], Mapping[str, Sequence[int]]]
    ] = None,
    keep_initializers_as_inputs: Optional[bool] = None,
    custom_opsets: Optional[Mapping[str, int]] = None,
    export_modules_as_functions: Union[bool, Collection[Type[torch.nn.Module]]] = False,
    *,
    kwargs: Optional[Dict[str, Any]] = None,
    external_data: bool = True,
    use_external_data_format: bool = False,
    dynamo: bool = False,
    **deprecated,
) -> None:
    """Exports ``model`` to ONNX, as torch.onnx.export (same arguments, same meaning), with
    torchonnx's C++ exporter.

    ``model``: an ``nn.Module`` (traced on ``args`` in the training mode ``training`` selects,
    restored after), a ``torch.jit.ScriptModule`` (scripted or traced), a
    ``torch.jit.ScriptFunction``, or a ``torch.export.ExportedProgram`` (read as its .pt2 by
    torchonnx's C++ reader: ``args`` default to its example inputs and ``dynamic_axes`` to its
    symbolic dims, with or without ``dynamo=True``). ``args``: one tensor, or a tuple of the arguments of forward(),
    each a tensor, a number, or nested tuples/lists/dicts of them; a trailing dict holds keyword
    arguments. ``f``: a file path, or a binary file-like object (``io.BytesIO``).

    ``kwargs``, ``external_data`` and ``dynamo`` are torch 2's: keyword arguments of forward();
    external data is written for models over 2 GB whatever ``external_data`` says (protobuf cannot
    hold them); the dynamo exporter is torch.onnx's, not torchonnx's (``dynamo=True`` is an
    error). ``example_outputs``, ``strip_doc_string``, ``enable_onnx_checker`` and
    ``autograd_inlining`` of older and newer torch versions are accepted and have no effect (the
    checker always runs).
    """
    if _is_exported_program(model):
        model, args, dynamic_axes = _from_exported_program(model, args, input_names,
                                                           dynamic_axes)
    elif dynamo:
        raise errors.InvalidArgumentError(
            "export(dynamo=True) asks for torch.onnx's dynamo exporter: torchonnx exports "
            "TorchScript (traced or scripted models); call torch.onnx.export for dynamo"
        )
    _check_deprecated(deprecated)
    options = _export_options(
        model,
        export_params,
        verbose,
        training,
        input_names,
        output_names,
        operator_export_type,
        opset_version,
        do_constant_folding,
        dynamic_axes,
        keep_initializers_as_inputs,
        custom_opsets,
        export_modules_as_functions,
        use_external_data_format,
    )
    _C.check_export_options(options)
    if f is None:
        raise errors.InvalidArgumentError(
            "export: f is required (a file path or a binary file-like object); torchonnx "
            "returns no ONNXProgram"
        )
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
    elif hasattr(f, "write"):
        path = None
    else:
        raise errors.InvalidArgumentError(
            f"export: f must be a file path or a binary file-like object, not {type(f).__name__}"
        )
    args = _args_tuple(args, kwargs)

    def run(p: _Prepared):
        return _C.export_module(p.module, list(p.args), options, path)

    data = _run(model, args, training, run)
    if path is None:
        f.write(data)


def export_to_pretty_string(
    model,
    args,
    export_params=True,
    verbose=False,
    training=TrainingMode.EVAL,
    input_names=None,
    output_names=None,
    operator_export_type=OperatorExportTypes.ONNX,
    export_type=None,
    google_printer=False,
    opset_version=None,
    keep_initializers_as_inputs=None,
    custom_opsets=None,
    add_node_names=True,
    do_constant_folding=True,
    dynamic_axes=None,
    *,
    format: str = "text",
) -> str:
    """Exports as export() does and returns the ONNX graph as text, in torch.onnx's format
    (``%y : Float(2, 4) = onnx::Gemm[alpha=1, ...](%x, %w, %b)``). ``format="dot"`` returns it as
    a Graphviz DOT graph instead (torchonnx's addition). ``google_printer=True`` (protobuf's debug
    format) is not supported; ``export_type`` and ``add_node_names`` have no effect, as in
    torch.onnx."""
    if google_printer:
        raise errors.InvalidArgumentError(
            "export_to_pretty_string(google_printer=True): torchonnx prints torch.onnx's graph "
            "format only (google_printer=False)"
        )
    options = _export_options(
        model,
        export_params,
        verbose,
        training,
        input_names,
        output_names,
        operator_export_type,
        opset_version,
        do_constant_folding,
        dynamic_axes,
        keep_initializers_as_inputs,
        custom_opsets,
    )
    _C.check_export_options(options)
    args = _args_tuple(args)

    def run(p: _Prepared):
        return _C.module_pretty_string(p.module, list(p.args), options, format)

    return _run(model, args, training, run)


def unconvertible_ops(
    model,
    args,
    training: "TrainingMode" = TrainingMode.EVAL,
    opset_version: Optional[int] = None,
) -> Tuple[torch._C.Graph, List[str]]:
    """The ops of ``model`` that cannot be exported at ``opset_version``, all at once, as
    torch.onnx.utils.unconvertible_ops: the TorchScript graph (of the traced or scripted
    forward) and the op names ("aten::erfinv"). Ops whose converter rejects some of their nodes
    are listed too."""
    options = _export_options(model, training=training, opset_version=opset_version)
    _C.check_export_options(options)
    args = _args_tuple(args)

    def run(p: _Prepared):
        graph = p.module._get_method("forward").graph.copy()
        torch._C._jit_pass_inline(graph)
        return graph, [op.name for op in _C.unconvertible_ops(p.module, list(p.args), options)]

    return _run(model, args, training, run)


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn, opset_version: int) -> None:
    """Registers a Python symbolic function for the op `symbolic_name` ("domain::op", or
    "::op" for an aten op) from `opset_version` up, as torch.onnx.register_custom_op_symbolic.
    It is called during conversion as ``symbolic_fn(g, *inputs)`` (torchonnx.symbolic_helper
    describes `g` and the values) and takes precedence over torchonnx's built-in converter. A
    Python exception inside it stops the export and reaches the caller as it is (as in
    torch.onnx), with a note naming the node, its source location and the traceback."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    if not callable(symbolic_fn):
        raise errors.InvalidArgumentError(
            f"register_custom_op_symbolic: symbolic_fn {symbolic_fn!r} is not callable"
        )
    if symbolic_name == "prim::PythonOp":
        # Autograd Functions without their own symbolic method (symbolic_helper._python_op).
        if isinstance(opset_version, bool) or not isinstance(opset_version, int):
            raise errors.InvalidArgumentError(f"opset_version {opset_version!r} is no int")
        symbolic_helper._python_op_symbolics[opset_version] = symbolic_fn
        return
    _C.register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version)


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    """Removes the registration of `symbolic_name` made at `opset_version`."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    if symbolic_name == "prim::PythonOp":
        symbolic_helper._python_op_symbolics.pop(opset_version, None)
        return
    _C.unregister_custom_op_symbolic(symbolic_name, opset_version)


# Arguments of other torch versions' export: the removed ones of 1.x, and torch 2's that only the
# dynamo exporter reads.
_IGNORED = {
    "add_node_names",  # torch.onnx 1.x's (export_to_pretty_string, utils._export); 2.6 ignores it
    "example_outputs",
    "strip_doc_string",
    "enable_onnx_checker",
    "autograd_inlining",
    "report",
    "optimize",
    "verify",
    "profile",
    "dump_exported_program",
    "artifacts_dir",
    "fallback",
    "custom_translation_table",
}


def _check_deprecated(deprecated: Dict[str, Any]) -> None:
    if deprecated.get("dynamic_shapes") is not None:
        raise errors.InvalidArgumentError(
            "export(dynamic_shapes=...) is the dynamo exporter's: give torchonnx dynamic_axes "
            "({'input_name': {0: 'batch'}})"
        )
    deprecated.pop("dynamic_shapes", None)
    unknown = sorted(set(deprecated) - _IGNORED)
    if unknown:
        raise TypeError(f"export() got unexpected keyword argument(s): {', '.join(unknown)}")
    for name in sorted(deprecated):
        warnings.warn(
            f"export(): '{name}' is accepted for compatibility and has no effect in torchonnx",
            DeprecationWarning,
            stacklevel=3,
        )
