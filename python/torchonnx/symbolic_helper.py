"""Python symbolic functions: torch.onnx's `g`, values and the helpers custom symbolics use most
(``parse_args``, ``_maybe_get_const``, ``_get_const``, ``_is_none``, ``_get_tensor_sizes``), over
the C++ core's symbolic API (include/torchonnx/symbolic.h: GraphContext and Args).

A function registered with ``torchonnx.register_custom_op_symbolic(name, fn, opset)`` is called
during conversion as torch.onnx calls it: ``fn(g, *inputs)``, one value per input of the
TorchScript node, returning a value or a tuple of values (one per output of the node):

    @parse_args("v", "v", "f", "i")
    def symbolic_foo_forward(g, input1, input2, attr1, attr2):
        return g.op("custom_domain::Foo", input1, input2, attr1_f=attr1, attr2_i=attr2)

Values made by ``g.op`` have the type ONNX shape inference gives their node (as torch.onnx infers
each node a symbolic adds) and a ``.node()`` of kind ``onnx::<Op>`` with the node's inputs,
outputs and attributes, so that torch.onnx's own symbolics and helpers read them
(``symbolic_opset11.squeeze`` reads the rank of a value the symbolic made, ``_is_tuple_construct``
its node's kind, ``parse_args`` and ``_get_const`` the value of an ``onnx::Constant`` it made).
What differs from torch.onnx: ``g`` has no ``block``/``graph`` internals — only ``op``, ``at``,
``opset`` and ``constant``. The objects are valid during the call only.
"""

import contextlib
import functools
import importlib
import inspect
import threading
import traceback
from typing import Any, List, Optional

import torch

from . import errors

__all__ = [
    "parse_args",
    "GraphContext",
    "SymbolicContext",
    "Value",
]


class Value:
    """A value of the graph being exported, as torch.onnx's torch._C.Value: an input of the
    TorchScript node being converted, or an output of a node made by ``g.op``."""

    def __init__(self, call, index: Optional[int] = None, name: Optional[str] = None,
                 node: Optional["_OnnxNode"] = None):
        self._call = call
        self._index = index  # input `index` of the TorchScript node
        self._name = name  # the ONNX value's name, once made
        self._node = node  # the ONNX node that made it (g.op, g.constant)
        self._type = None  # (dtype name, sizes) of a value made by g.op, once asked

    def _onnx_name(self) -> str:
        if self._name is None:
            self._name = self._call.tensor(self._index)
        return self._name

    def _is_input(self) -> bool:
        return self._index is not None

    def type(self) -> "_Type":
        return _Type(self)

    def node(self):
        """The TorchScript node that produces this input (torch._C.Node); for a value made by
        g.op, its ONNX node (kind "onnx::Gather", ...)."""
        return self._call.input_node(self._index) if self._is_input() else self._node

    def _made_type(self):
        """(dtype name or None, sizes with -1 for a dynamic dim, or None) of a value made by g.op:
        ONNX shape inference of its node."""
        if self._type is None:
            self._type = tuple(self._call.value_type(self._onnx_name()))
        return self._type

    def setType(self, type) -> "Value":
        """Accepted for torch.onnx's symbolics (which copy a node's type to their result); the
        exporter infers the types of the nodes a symbolic makes itself."""
        return self

    def requiresGrad(self) -> bool:
        return False

    def debugName(self) -> str:
        return self._call.debug_name(self._index) if self._is_input() else self._onnx_name()

    def __repr__(self):
        return f"Value({self.debugName()})"


class _Type:
    """What the exporter knows of a value's type (torch._C.TensorType's sizes/scalarType/dim)."""

    def __init__(self, value: Value):
        self._value = value

    def sizes(self) -> Optional[List[Optional[int]]]:
        v = self._value
        sizes = v._call.sizes(v._index) if v._is_input() else v._made_type()[1]
        return None if sizes is None else [None if d < 0 else d for d in sizes]

    def varyingSizes(self):
        return self.sizes()

    def scalarType(self) -> Optional[str]:
        v = self._value
        return v._call.dtype(v._index) if v._is_input() else v._made_type()[0]

    def dim(self) -> Optional[int]:
        v = self._value
        if v._is_input():
            return v._call.rank(v._index)
        sizes = v._made_type()[1]
        return None if sizes is None else len(sizes)

    def dtype(self) -> Optional[torch.dtype]:
        name = self.scalarType()
        if name is None:
            return None
        from torch.onnx import _type_utils

        scalar_type = _type_utils.JitScalarType
        from_name = getattr(scalar_type, "_from_name", None) or scalar_type.from_name  # torch 1.13
        return from_name(name).dtype()

    def kind(self) -> str:
        return "TensorType"

    def isSubtypeOf(self, other) -> bool:
        """As torch._C.TensorType: a tensor is a subtype of TensorType.get() (torch's _is_tensor);
        a value that is None (an omitted input) is not."""
        return isinstance(other, torch._C.TensorType) and not _is_none(self._value)

    def __str__(self):
        sizes, dtype = self.sizes(), self.scalarType()
        if dtype is None:
            return "Tensor"
        return f"{dtype}({', '.join('?' if d is None else str(d) for d in sizes or [])})"


class _OnnxNode:
    """The ONNX node a value made by ``g.op`` comes from, as torch._C.Node shows it to torch.onnx's
    helpers: ``kind()`` ("onnx::Gather", "domain::Op"), inputs, outputs and attributes
    (``kindOf``, ``i``/``f``/``s``/``t``/``is``/``fs``/``ss``, so that ``_node_get(node, "value")``
    reads an ``onnx::Constant``)."""

    def __init__(self, kind: str, inputs: List[Value], attributes: dict):
        self._kind = kind
        self._inputs = inputs
        self._attributes = attributes  # name -> (suffix, value)
        self._outputs: List[Value] = []

    def kind(self) -> str:
        return self._kind

    def inputs(self) -> List[Value]:
        return list(self._inputs)

    def input(self) -> Value:
        if len(self._inputs) != 1:
            raise RuntimeError(f"{self._kind} has {len(self._inputs)} inputs, not one")
        return self._inputs[0]

    def inputsAt(self, i: int) -> Value:
        return self._inputs[i]

    def inputsSize(self) -> int:
        return len(self._inputs)

    def outputs(self) -> List[Value]:
        return list(self._outputs)

    def output(self) -> Value:
        if len(self._outputs) != 1:
            raise RuntimeError(f"{self._kind} has {len(self._outputs)} outputs, not one")
        return self._outputs[0]

    def outputsAt(self, i: int) -> Value:
        return self._outputs[i]

    def outputsSize(self) -> int:
        return len(self._outputs)

    def mustBeNone(self) -> bool:
        return False

    def hasAttribute(self, name: str) -> bool:
        return name in self._attributes

    def hasAttributes(self) -> bool:
        return bool(self._attributes)

    def attributeNames(self) -> List[str]:
        return list(self._attributes)

    def kindOf(self, name: str) -> str:
        return self._attribute(name)[0]

    def _attribute(self, name: str):
        if name not in self._attributes:
            raise RuntimeError(f"{self._kind} has no attribute '{name}'")
        return self._attributes[name]

    def _get(self, name: str, kind: str):
        got, value = self._attribute(name)
        if got != kind:
            raise RuntimeError(f"attribute '{name}' of {self._kind} is of kind {got}, not {kind}")
        return value

    def i(self, name: str) -> int:
        return self._get(name, "i")

    def f(self, name: str) -> float:
        return self._get(name, "f")

    def s(self, name: str) -> str:
        return self._get(name, "s")

    def t(self, name: str) -> torch.Tensor:
        return self._get(name, "t")

    def fs(self, name: str) -> List[float]:
        return self._get(name, "fs")

    def ss(self, name: str) -> List[str]:
        return self._get(name, "ss")

    def is_(self, name: str) -> List[int]:
        return self._get(name, "is")

    def sourceRange(self) -> str:
        return ""

    def scopeName(self) -> str:
        return ""

    def __repr__(self):
        outs = ", ".join(f"%{o.debugName()}" for o in self._outputs)
        ins = ", ".join(f"%{v.debugName()}" for v in self._inputs)
        return f"{outs} = {self._kind}({ins})"


# torch._C.Node's ints attribute getter is named `is` (a keyword: getattr(node, "is")).
setattr(_OnnxNode, "is", _OnnxNode.is_)

_SUFFIXES = ("is", "fs", "ss", "i", "f", "s", "t")


def _attribute(key: str, value):
    """torch.onnx's attribute naming: `alpha_f`, `axes_i` (a list: ints), `value_t`, ..."""
    name, _, suffix = key.rpartition("_")
    if name and suffix in _SUFFIXES:
        if suffix in ("i", "f", "s") and isinstance(value, (list, tuple)):
            suffix += "s"
        if suffix == "t" and not isinstance(value, torch.Tensor):
            value = torch.tensor(value)
        return name, suffix, list(value) if suffix.endswith("s") and len(suffix) == 2 else value
    # No suffix: the Python value's type decides.
    if isinstance(value, bool) or isinstance(value, int):
        return key, "i", int(value)
    if isinstance(value, float):
        return key, "f", value
    if isinstance(value, str):
        return key, "s", value
    if isinstance(value, torch.Tensor):
        return key, "t", value
    if isinstance(value, (list, tuple)) and value:
        kind = _attribute(key, value[0])[1]
        return key, kind + "s", list(value)
    raise errors.OnnxExporterError(
        f"g.op: attribute '{key}' = {value!r}: name it with a type suffix (_i, _f, _s, _t, and a "
        "list for _is, _fs, _ss)"
    )


class GraphContext:
    """torch.onnx's `g` of a symbolic function."""

    def __init__(self, call):
        self._call = call

    @property
    def opset(self) -> int:
        return self._call.opset()

    def op(self, opname: str, *raw_args, outputs: int = 1, **kwargs):
        """Adds an ONNX node: `opname` ("Elu", or "domain::Op" for a custom domain), inputs (values,
        or tensors and numbers, which become constants; None: an omitted optional input),
        attributes as keyword arguments with torch.onnx's type suffixes. Returns its output, or a
        tuple of `outputs` outputs."""
        if opname == "Constant" and not raw_args and set(kwargs) == {"value_t"}:
            value = kwargs["value_t"]
            return self.constant(value if isinstance(value, torch.Tensor) else torch.tensor(value))
        inputs = [self._input(a) for a in raw_args]
        attributes = [_attribute(k, v) for k, v in sorted(kwargs.items())]
        names = self._call.op(opname, [_input_name(v) for v in inputs], attributes, outputs)
        kind = opname if "::" in opname else "onnx::" + opname
        node = _OnnxNode(kind, [v for v in inputs if v is not None],
                         {name: (suffix, value) for name, suffix, value in attributes})
        values = tuple(Value(self._call, name=n, node=node) for n in names)
        node._outputs = list(values)
        return values[0] if outputs == 1 else values

    def at(self, operator: str, *args, overload_name: str = "", **kwargs):
        """An ATen op node (org.pytorch.aten::ATen[operator=...]), as torch.onnx's g.at."""
        return self.op("org.pytorch.aten::ATen", *args, operator_s=operator,
                       overload_name_s=overload_name, **kwargs)

    def constant(self, value) -> Value:
        tensor = torch.as_tensor(value)
        node = _OnnxNode("onnx::Constant", [], {"value": ("t", tensor)})
        out = Value(self._call, name=self._call.constant(tensor), node=node)
        node._outputs = [out]
        return out

    def _input(self, a) -> Optional[Value]:
        """An input of g.op as a value (None for an omitted optional input)."""
        if isinstance(a, Value) or a is None:
            return a
        if isinstance(a, torch.Tensor):
            return self.constant(a)
        if isinstance(a, (bool, int, float)):
            return self.constant(torch.tensor(a))
        raise errors.OnnxExporterError(
            f"g.op: input {a!r} is no value, tensor or number"
        )


def _input_name(v: Optional[Value]) -> str:
    return "" if v is None else v._onnx_name()


# --------------------------------------------------------------------------------------------
# Constant arguments


def _is_value(x: Any) -> bool:
    return isinstance(x, Value)


def _is_none(x: Any) -> bool:
    if x is None:
        return True
    return isinstance(x, Value) and x._is_input() and x._call.is_none(x._index)


def _is_onnx_constant(x: Any) -> bool:
    """Whether `x` is a value made by g.op("Constant") (or g.constant)."""
    return isinstance(x, Value) and x._node is not None and x._node.kind() == "onnx::Constant"


def _is_constant(x: Any) -> bool:
    return (not isinstance(x, Value) or _is_onnx_constant(x)
            or (x._is_input() and x._call.is_constant(x._index)))


def _node_get(node, key: str):
    """An attribute of an ONNX node made by g.op, by its kind (torch.onnx's _node_get)."""
    return getattr(node, node.kindOf(key))(key)


def _parse_onnx_constant(value: Value, desc: str):
    """A g.op("Constant") read as `desc`, as torch.onnx's _parse_arg reads an onnx::Constant."""
    tensor = _node_get(value.node(), "value")
    if desc == "i":
        return int(tensor)
    if desc == "f":
        return float(tensor)
    if desc == "b":
        return bool(tensor)
    if desc == "s":
        return str(tensor)
    if desc == "t":
        return tensor
    if desc == "is":
        return [int(v) for v in tensor]
    if desc == "fs":
        return [float(v) for v in tensor]
    raise errors.SymbolicValueError(
        f"ONNX symbolic does not understand the Constant node '{value.node()}' specified with "
        f"descriptor '{desc}'.")


def _constant_ivalue(value: Value):
    node = value.node()
    if node is None or node.kind() != "prim::Constant":
        return None
    return node.output().toIValue()


def _parse_arg(value, desc: str, arg_name: Optional[str] = None, node_name: Optional[str] = None):
    if desc == "none" or desc == "v" or not isinstance(value, Value):
        return value
    if _is_onnx_constant(value):
        return _parse_onnx_constant(value, desc)
    if not value._is_input():
        raise errors.OnnxExporterError(
            f"parse_args: argument '{arg_name}' of '{node_name}' is a value made by g.op, not a "
            f"constant ('{desc}')"
        )
    call, i = value._call, value._index
    if call.is_none(i):
        return None
    if not call.is_constant(i):
        raise errors.OnnxExporterError(
            f"parse_args: argument '{arg_name}' of '{node_name}' is not a constant (descriptor "
            f"'{desc}'): it is computed at run time. Make it a constant, or read it with 'v'"
        )
    if desc == "i":
        try:
            return call.int_arg(i)
        except errors.OnnxExporterError:
            return int(call.bool_arg(i))  # torch.onnx reads a bool as 0/1 (roi_align's aligned)
    if desc == "f":
        return call.float_arg(i)
    if desc == "b":
        return call.bool_arg(i)
    if desc == "s":
        return call.str_arg(i)
    if desc == "is":
        return call.int_list(i)
    if desc in ("t", "fs"):
        constant = _constant_ivalue(value)
        if constant is not None:
            if desc == "t":
                return constant if isinstance(constant, torch.Tensor) else torch.tensor(constant)
            return [float(v) for v in constant]
    raise errors.OnnxExporterError(
        f"parse_args: descriptor '{desc}' of argument '{arg_name}' of '{node_name}' is not "
        "supported here (use v, i, f, b, s, is, t, fs or none)"
    )


def _maybe_get_const(value, desc: str):
    """The constant value of `value` parsed as `desc` when it is a constant, else `value`."""
    if isinstance(value, Value) and _is_constant(value):
        return _parse_arg(value, desc)
    return value


def _get_const(value, desc: str, arg_name: str):
    if not _is_constant(value):
        raise errors.OnnxExporterError(
            f"ONNX symbolic expected a constant value of the '{arg_name}' argument, got "
            f"'{value}'"
        )
    return _parse_arg(value, desc)


def _maybe_get_scalar(value):
    out = _maybe_get_const(value, "t")
    if isinstance(out, torch.Tensor) and out.shape == ():
        return out
    return value


def _get_tensor_sizes(x: Value, allow_nonstatic: bool = True):
    if not isinstance(x, Value):
        return None
    sizes = x.type().sizes()
    if sizes is None:
        return None
    if not allow_nonstatic and any(d is None for d in sizes):
        return None
    return sizes


def _get_tensor_rank(x: Value) -> Optional[int]:
    return x.type().dim() if isinstance(x, Value) else None


def _get_tensor_dim_size(x: Value, dim: int) -> Optional[int]:
    sizes = _get_tensor_sizes(x)
    return sizes[dim] if sizes else None


def parse_args(*arg_descriptors: str):
    """A decorator that converts a symbolic's arguments from values to Python types by
    descriptor: "v" (the value), "i" int, "is" list of ints, "f" float, "fs" list of floats,
    "b" bool, "s" str, "t" tensor, "none" (unused), as torch.onnx.symbolic_helper.parse_args."""

    def decorator(fn):
        fn._arg_descriptors = arg_descriptors

        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            if len(args) > len(arg_descriptors):
                raise errors.OnnxExporterError(
                    f"parse_args: {fn.__name__} got {len(args)} arguments but "
                    f"{len(arg_descriptors)} descriptors"
                )
            try:
                arg_names = list(inspect.signature(fn).parameters)[1:]
            except (TypeError, ValueError):
                arg_names = [None] * len(args)
            args = [_parse_arg(a, d, n, fn.__name__)
                    for a, d, n in zip(args, arg_descriptors, arg_names)]
            return fn(g, *args, **kwargs)

        return wrapper

    return decorator


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Value) and not _is_none(x)


def _is_packed_list(x: Any) -> bool:
    node = x.node() if isinstance(x, Value) else None
    return node is not None and node.kind() == "prim::ListConstruct"


def _unpack_list(x: Value) -> List[Value]:
    """The elements of a list input, one value each (torch.onnx's _unpack_list)."""
    if not _is_packed_list(x):
        raise errors.OnnxExporterError(f"_unpack_list: {x!r} is no list built in the model")
    return [Value(x._call, name=n) for n in x._call.tensor_list(x._index)]


# Symbolic functions written for torch.onnx (torchvision's, a model's own) are decorated with
# torch.onnx.symbolic_helper.parse_args and call its helpers, which look up these names in their
# module when they run: while torchonnx calls a Python symbolic, each of them is replaced by one
# that gives torchonnx's values (and their nodes, for _node_get) to the function above and anything
# else to torch's.
_TORCH_HELPERS = (
    "_parse_arg",
    "_is_value",
    "_is_none",
    "_is_constant",
    "_is_tensor",
    "_maybe_get_const",
    "_get_const",
    "_maybe_get_scalar",
    "_get_tensor_sizes",
    "_get_tensor_rank",
    "_get_tensor_dim_size",
    "_is_packed_list",
    "_unpack_list",
    "_node_get",
)
_torch_helpers_depth = threading.local()


def _dispatching(ours, theirs):
    @functools.wraps(theirs)
    def helper(value, *args, **kwargs):
        if isinstance(value, (Value, _OnnxNode)):
            return ours(value, *args, **kwargs)
        return theirs(value, *args, **kwargs)

    helper._torchonnx_theirs = theirs
    return helper


def _torch_helper_modules():
    """The modules whose helpers torch.onnx's symbolic functions look up: torch.onnx.symbolic_helper
    and, since torch 2.9, torch.onnx._internal.torchscript_exporter.symbolic_helper, where they are
    defined (torch.onnx.symbolic_helper re-exports them there)."""
    import torch.onnx.symbolic_helper as public

    modules = [public]
    try:
        inner = importlib.import_module("torch.onnx._internal.torchscript_exporter.symbolic_helper")
    except ImportError:
        inner = None
    if inner is not None and inner is not public:
        modules.append(inner)
    return modules


@contextlib.contextmanager
def _torch_helpers_for_our_values():
    depth = getattr(_torch_helpers_depth, "n", 0)
    saved = []
    if depth == 0:
        for theirs in _torch_helper_modules():
            for name in _TORCH_HELPERS:
                original = getattr(theirs, name, None)
                if original is not None and not hasattr(original, "_torchonnx_theirs"):
                    saved.append((theirs, name, original))
                    setattr(theirs, name, _dispatching(globals()[name], original))
    _torch_helpers_depth.n = depth + 1
    try:
        yield
    finally:
        _torch_helpers_depth.n = depth
        for theirs, name, original in saved:
            setattr(theirs, name, original)


# The exception a Python symbolic raised (other than torchonnx's own), re-raised as it is by
# torchonnx.export once the C++ core has stopped (torch.onnx lets it through, and callers match
# its type and words); torchonnx's message becomes a note on it.
_raised = threading.local()


def _take_raised() -> Optional[BaseException]:
    e = getattr(_raised, "error", None)
    _raised.error = None
    return e


# --------------------------------------------------------------------------------------------
# torch.autograd.Function (prim::PythonOp)


class SymbolicContext:
    """What torch.onnx's SymbolicContext gives a symbolic whose first parameter is annotated
    with it: the TorchScript node being converted (``cur_node``). ``params_dict`` and ``env`` are
    empty and ``onnx_block`` is None: torchonnx's graph is not torch's."""

    def __init__(self, cur_node):
        self.cur_node = cur_node
        self.params_dict = {}
        self.env = {}
        self.onnx_block = None


def _wants_context(fn) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if not params:
        return False
    annotation = params[0].annotation
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return name.split(".")[-1] == "SymbolicContext"


# Python symbolics registered for "prim::PythonOp", by opset (utils.register_custom_op_symbolic).
_python_op_symbolics = {}


def _python_op(g: GraphContext, *inputs):
    """The symbolic of prim::PythonOp (a torch.autograd.Function in a traced model), as torch.onnx
    converts it: the Function's own static `symbolic` method, called with the node's tensor and
    non-tensor arguments in order; else, when no function is registered for "prim::PythonOp", the
    Function's traced forward inlined; else the registered function, called as
    torch.onnx calls it: fn(g, *args, name=<the Function's name>, module=...) with the Function's
    arguments (tensors and not), with the SymbolicContext first when it asks for it."""
    call = g._call
    node = call.node()
    function_class = getattr(node.pyobj(), "__self__", None)
    symbolic = getattr(function_class, "symbolic", None)
    # The Function's arguments in order: its tensors as values, its other arguments (apply(x, 2)'s
    # 2) as the Python objects they were, as torch.onnx passes them to either symbolic.
    scalars = iter(node.scalar_args())
    tensors = iter(inputs)
    args = [next(tensors) if c == "d" else next(scalars) for c in node.cconv()]
    if symbolic is not None:
        return symbolic(g, *args)
    opsets = [o for o in _python_op_symbolics if o <= g.opset]
    if not opsets:
        # As torch.onnx (autograd_inlining=True): the Function's forward, as traced, in its place.
        names = call.inline_subgraph()
        if names is not None:
            outs = [Value(call, name=n) for n in names]
            return outs[0] if len(outs) == 1 else tuple(outs)
        raise errors.OnnxExporterError(
            f"the torch.autograd.Function {node.pyname()} has no static symbolic method and no "
            "symbolic is registered for prim::PythonOp: add `def symbolic(g, ...)` to the "
            "Function, or register_custom_op_symbolic('prim::PythonOp', fn, opset)"
        )
    fn = _python_op_symbolics[max(opsets)]
    kwargs = {"name": node.pyname(), "module": getattr(function_class, "__module__", "")}
    if _wants_context(fn):
        return fn(SymbolicContext(node), g, *args, **kwargs)
    return fn(g, *args, **kwargs)


# --------------------------------------------------------------------------------------------
# The call from the C++ core


def _call_symbolic(fn, name: str, call):
    """Runs `fn` for one node (called by torchonnx._C with the GIL): returns (names of the
    output values, None), or (None, message) when it raised or returned something else."""
    try:
        g = GraphContext(call)
        inputs = [Value(call, index=i) for i in range(call.size())]
        with _torch_helpers_for_our_values():
            if fn is not _python_op and _wants_context(fn):
                out = fn(SymbolicContext(call.node()), g, *inputs)
            else:
                out = fn(g, *inputs)
        if out is None:
            return None, (
                f"the Python symbolic function {getattr(fn, '__qualname__', fn)!r} registered "
                f"for {name} returned None (it cannot convert this node)"
            )
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        names = []
        node = call.node()
        for k, o in enumerate(outs):
            if o is None and k > 0:
                # torch.onnx lets a symbolic return None for an output nothing reads (torchvision's
                # roi_pool for its argmax): a placeholder the dead-code pass removes.
                if node is not None and k < node.outputsSize() and node.outputsAt(k).uses():
                    raise errors.OnnxExporterError(
                        f"the symbolic returned None for output {k} of {name}, which the model "
                        "reads: return a value for it"
                    )
                o = torch.zeros(0)
            if not isinstance(o, Value):
                o = GraphContext(call).constant(o)
            names.append(o._onnx_name())
        return names, None
    except errors.OnnxExporterError as e:
        # torchonnx's own errors (parse_args, g.op, autograd Functions) say what is wrong.
        return None, (
            f"the Python symbolic function {getattr(fn, '__qualname__', fn)!r} registered for "
            f"{name} failed: {e}"
        )
    except Exception as e:
        _raised.error = e
        return None, (
            f"the Python symbolic function {getattr(fn, '__qualname__', fn)!r} registered for "
            f"{name} raised:\n{traceback.format_exc().rstrip()}"
        )
