"""Python symbolic functions (register_custom_op_symbolic): called during conversion with torch.onnx's
`g` and values; standard ops, custom domains, parse_args and the helpers; a Python exception
becomes an export error naming the op and the traceback."""

import io

import pytest
import torch
import torch.nn as nn

import torchonnx
from conftest import OnnxModel, run_in_ort
from torchonnx import symbolic_helper
from torchonnx.symbolic_helper import parse_args

# torch.onnx 2.6 defines no errors.CheckerError (its checker errors are OnnxExporterErrors).
TORCH_CHECKER_ERROR = getattr(torch.onnx.errors, "CheckerError", torch.onnx.errors.OnnxExporterError)

# torch.onnx.SymbolicContext, which the documentation's example annotates with (torch 1.13 has
# it; newer versions may not: torchonnx's own then).
SymbolicContext = getattr(torch.onnx, "SymbolicContext", torchonnx.SymbolicContext)

# custom_ops::foo_forward, defined in Python (the documentation's example uses a C++ TORCH_LIBRARY;
# the exporter sees the same TorchScript op either way).
_lib = torch.library.Library("custom_ops", "DEF")
_lib.define("foo_forward(Tensor input1, Tensor input2, float attr1, int attr2) -> Tensor")
_lib.impl("foo_forward", lambda a, b, attr1, attr2: a + b * attr1 + attr2, "CPU")
# Ops whose symbolics below call torch.onnx's own symbolics on the values they make.
_lib.define("last_column(Tensor x) -> Tensor")
_lib.impl("last_column", lambda x: x[:, -1], "CPU")
_lib.define("add_dim(Tensor x) -> Tensor")
_lib.impl("add_dim", lambda x: x.unsqueeze(1), "CPU")


class FooModel(torch.nn.Module):
    def __init__(self, attr1, attr2):
        super(FooModel, self).__init__()
        self.attr1 = attr1
        self.attr2 = attr2

    def forward(self, input1, input2):
        # Calling custom op
        return torch.ops.custom_ops.foo_forward(input1, input2, self.attr1, self.attr2)


@pytest.fixture
def registered():
    """Names registered by a test, unregistered after it."""
    names = []
    yield names
    for name, opset in names:
        torchonnx.unregister_custom_op_symbolic(name, opset)


def test_custom_op_to_custom_domain(registered):
    # The documentation's "Custom operators" example, as written there.
    @parse_args("v", "v", "f", "i")
    def symbolic_foo_forward(g, input1, input2, attr1, attr2):
        return g.op("custom_domain::Foo", input1, input2, attr1_f=attr1, attr2_i=attr2)

    torchonnx.register_custom_op_symbolic("custom_ops::foo_forward", symbolic_foo_forward, 9)
    registered.append(("custom_ops::foo_forward", 9))

    model = FooModel(1.5, 3)
    example_input1 = torch.randn(2, 3)
    f = io.BytesIO()
    torchonnx.export(model, (example_input1, example_input1), f,
                     # only needed if you want to specify an opset version > 1.
                     custom_opsets={"custom_domain": 2})
    m = OnnxModel(f.getvalue())
    assert [(n["domain"], n["op_type"]) for n in m.nodes] == [("custom_domain", "Foo")]
    assert m.nodes[0]["attributes"] == {"attr1": 1.5, "attr2": 3}
    assert m.opsets["custom_domain"] == 2


def test_custom_op_as_standard_ops_runs(registered):
    # The same op lowered to standard ONNX ops: ONNX Runtime runs it, against eager PyTorch.
    @parse_args("v", "v", "f", "i")
    def foo_as_onnx(g, input1, input2, attr1, attr2):
        scaled = g.op("Mul", input2, g.op("Constant", value_t=torch.tensor(attr1)))
        return g.op("Add", g.op("Add", input1, scaled), torch.tensor(float(attr2)))

    torchonnx.register_custom_op_symbolic("custom_ops::foo_forward", foo_as_onnx, 9)
    registered.append(("custom_ops::foo_forward", 9))
    model = FooModel(0.5, 2)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    f = io.BytesIO()
    torchonnx.export(model, (a, b), f)
    assert OnnxModel(f.getvalue()).op_types.count("Add") == 2
    run_in_ort(f.getvalue(), [a, b], [model(a, b)])


def test_replaces_a_builtin_converter_and_unregisters(registered):
    # aten::elu, as in "Adding support for an operator"; alpha parsed by parse_args.
    @parse_args("v", "f", "none", "none")
    def elu(g, input, alpha, scale=None, input_scale=None):
        return g.op("Elu", input, alpha_f=alpha * 2)  # twice alpha: visibly this function

    torchonnx.register_custom_op_symbolic("::elu", elu, 9)
    registered.append(("::elu", 9))
    model, x = nn.ELU(alpha=0.25), torch.randn(3, 4)
    f = io.BytesIO()
    torchonnx.export(model, x, f)
    node = OnnxModel(f.getvalue()).nodes[0]
    assert node["op_type"] == "Elu" and node["attributes"]["alpha"] == 0.5
    run_in_ort(f.getvalue(), [x], [nn.ELU(alpha=0.5)(x)])

    torchonnx.unregister_custom_op_symbolic("::elu", 9)
    registered.clear()
    f = io.BytesIO()
    torchonnx.export(model, x, f)
    run_in_ort(f.getvalue(), [x], [model(x)])  # the built-in converter again


def test_values_types_helpers_and_outputs(registered):
    seen = {}

    def topk(g, self, k, dim, largest, sorted):
        seen["sizes"] = self.type().sizes()
        seen["dtype"] = self.type().scalarType()
        seen["dim"] = self.type().dim()
        seen["helper_sizes"] = symbolic_helper._get_tensor_sizes(self)
        seen["k"] = symbolic_helper._maybe_get_const(k, "i")
        seen["dim_arg"] = symbolic_helper._get_const(dim, "i", "dim")
        seen["largest_is_none"] = symbolic_helper._is_none(largest)
        seen["kind"] = k.node().kind()
        seen["opset"] = g.opset
        k_tensor = g.op("Constant", value_t=torch.tensor([seen["k"]], dtype=torch.int64))
        return g.op("TopK", self, k_tensor, axis_i=seen["dim_arg"], outputs=2)

    torchonnx.register_custom_op_symbolic("aten::topk", topk, 11)
    registered.append(("aten::topk", 11))

    class M(nn.Module):
        def forward(self, x):
            return torch.topk(x, 2, dim=1)

    x = torch.randn(3, 5)
    f = io.BytesIO()
    torchonnx.export(M(), x, f, opset_version=13)
    assert seen == {"sizes": [3, 5], "dtype": "Float", "dim": 2, "helper_sizes": [3, 5], "k": 2,
                    "dim_arg": 1, "largest_is_none": False, "kind": "prim::Constant",
                    "opset": 13}
    run_in_ort(f.getvalue(), [x], list(M()(x)))


def test_symbolic_context_first_argument(registered):
    # A symbolic whose first parameter is annotated SymbolicContext gets the node.
    kinds = []

    def foo(ctx: torchonnx.SymbolicContext, g, input1, input2, attr1, attr2):
        kinds.append(ctx.cur_node.kind())
        return g.op("Sub", input1, input2)

    torchonnx.register_custom_op_symbolic("custom_ops::foo_forward", foo, 9)
    registered.append(("custom_ops::foo_forward", 9))
    a, b = torch.randn(3), torch.randn(3)
    f = io.BytesIO()
    torchonnx.export(FooModel(1.0, 0), (a, b), f)
    assert kinds == ["custom_ops::foo_forward"]
    run_in_ort(f.getvalue(), [a, b], [a - b])


def test_fallthrough_exports_an_unconverted_custom_op_as_is():
    # Operator Export Type ONNX_FALLTHROUGH: an op without a symbolic stays a node of its own
    # domain.
    f = io.BytesIO()
    torchonnx.export(FooModel(2.0, 1), (torch.randn(2), torch.randn(2)), f,
                     operator_export_type=torchonnx.OperatorExportTypes.ONNX_FALLTHROUGH)
    m = OnnxModel(f.getvalue())
    # (its float and int arguments are constant inputs)
    assert [(n["domain"], n["op_type"]) for n in m.nodes if n["op_type"] != "Constant"] == [
        ("custom_ops", "foo_forward")]
    assert m.opsets.get("custom_ops") == 1
    with pytest.raises(torchonnx.errors.UnsupportedOperatorError, match="custom_ops::foo_forward"):
        torchonnx.export(FooModel(2.0, 1), (torch.randn(2), torch.randn(2)), io.BytesIO())


def test_g_at_makes_an_aten_node(registered):
    torchonnx.register_custom_op_symbolic(
        "custom_ops::foo_forward", lambda g, a, b, attr1, attr2: g.at("foo_forward", a, b), 9)
    registered.append(("custom_ops::foo_forward", 9))
    f = io.BytesIO()
    torchonnx.export(FooModel(1.0, 1), (torch.randn(2), torch.randn(2)), f)
    m = OnnxModel(f.getvalue())
    assert [(n["domain"], n["op_type"], n["attributes"]) for n in m.nodes] == [
        ("org.pytorch.aten", "ATen", {"operator": "foo_forward", "overload_name": ""})]


def test_python_exception_reaches_the_caller_with_a_note(registered):
    # As in torch.onnx, the symbolic's own exception reaches the caller (its type and words, which
    # callers match); torchonnx's account of the node (op, source line, traceback) is its note.
    def broken(g, input1, input2, attr1, attr2):
        raise KeyError("no such thing")

    torchonnx.register_custom_op_symbolic("custom_ops::foo_forward", broken, 9)
    registered.append(("custom_ops::foo_forward", 9))
    with pytest.raises(KeyError) as e:
        torchonnx.export(FooModel(1.0, 1), (torch.randn(2), torch.randn(2)), io.BytesIO())
    assert str(e.value) == "'no such thing'"
    msg = "\n".join(e.value.__notes__)
    assert "custom_ops::foo_forward" in msg
    assert "Traceback" in msg and "KeyError: 'no such thing'" in msg and "in broken" in msg
    assert "test_symbolic.py" in msg  # the model's source line

    # torch.onnx's parse_args finding more arguments than descriptors: its AssertionError.
    @torch.onnx.symbolic_helper.parse_args("v")
    def too_few_descriptors(g, input1, input2, attr1, attr2):
        return input1

    torchonnx.register_custom_op_symbolic("custom_ops::foo_forward", too_few_descriptors, 9)
    with pytest.raises(AssertionError, match="number of arguments"):
        torchonnx.export(FooModel(1.0, 1), (torch.randn(2), torch.randn(2)), io.BytesIO())


def test_symbolics_written_with_torch_onnx_helpers(registered):
    # A symbolic decorated with torch.onnx.symbolic_helper.parse_args (as torchvision's are) gets
    # its constants parsed, and torch's helpers read torchonnx's values.
    from torch.onnx import symbolic_helper as torch_helper

    @torch_helper.parse_args("v", "v", "f", "i")
    def foo(g, input1, input2, attr1, attr2):
        assert isinstance(attr1, float) and isinstance(attr2, int)
        assert torch_helper._get_tensor_rank(input1) == 2
        assert torch_helper._is_value(input1) and not torch_helper._is_none(input1)
        scaled = g.op("Mul", input2, g.op("Constant", value_t=torch.tensor([attr1])))
        return g.op("Add", g.op("Add", input1, scaled), g.op("Constant", value_t=torch.tensor(float(attr2))))

    torchonnx.register_custom_op_symbolic("custom_ops::foo_forward", foo, 9)
    registered.append(("custom_ops::foo_forward", 9))
    model = FooModel(0.5, 2)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    f = io.BytesIO()
    torchonnx.export(model, (a, b), f)
    run_in_ort(f.getvalue(), [a, b], [model(a, b)])
    # Outside an export, torch's helpers are torch's again.
    assert not hasattr(torch_helper._parse_arg, "_torchonnx_theirs")


def test_symbolic_reads_the_type_of_a_value_it_made(registered):
    # As torchvision's nms symbolic: torch.onnx's select (a Gather) then its squeeze of that
    # Gather's output, which squeezes only when the value's type says the dim has size 1 (else an
    # If on the run-time size, which needs torch's graph internals). torch.onnx infers each node a
    # symbolic adds; so does torchonnx, also when a dim is dynamic.
    from torch.onnx import symbolic_opset11 as opset11

    seen = {}

    def last_column(g, x):
        index = g.op("Constant", value_t=torch.tensor([2]))
        column = opset11.select(g, x, 1, index)
        seen["kind"] = column.node().kind()
        seen["sizes"] = column.type().sizes()
        seen["dtype"] = column.type().scalarType()
        seen["index_kind"] = column.node().inputs()[1].node().kind()
        seen["cast_sizes"] = g.op("Cast", column, to_i=7).type().sizes()  # int64
        return opset11.squeeze(g, column, 1)

    torchonnx.register_custom_op_symbolic("custom_ops::last_column", last_column, 11)
    registered.append(("custom_ops::last_column", 11))

    class M(nn.Module):
        def forward(self, x):
            return torch.ops.custom_ops.last_column(x * 2)

    x = torch.randn(5, 3)
    for dynamic_axes, rows in ((None, 5), ({"x": [0]}, None)):
        seen.clear()
        f = io.BytesIO()
        torchonnx.export(M(), x, f, opset_version=13, input_names=["x"],
                         dynamic_axes=dynamic_axes)
        assert seen == {"kind": "onnx::Gather", "sizes": [rows, 1], "dtype": "Float",
                        "index_kind": "onnx::Constant", "cast_sizes": [rows, 1]}
        m = OnnxModel(f.getvalue())
        assert "Squeeze" in m.op_types and "If" not in m.op_types
        run_in_ort(f.getvalue(), [x], [M()(x)])
    x2 = torch.randn(8, 3)
    run_in_ort(f.getvalue(), [x2], [M()(x2)])  # the dynamic export at another size


def test_symbolic_parses_an_onnx_constant_it_made(registered):
    # torch.onnx's helpers read a g.op("Constant") as a constant (onnx::Constant): unsqueeze at a
    # dim given as a Constant value unsqueezes at that dim, parse_args and _get_const read it.
    from torch.onnx import symbolic_helper as torch_helper
    from torch.onnx import symbolic_opset11 as opset11

    seen = {}

    def add_dim(g, x):
        dim = g.op("Constant", value_t=torch.tensor(1))
        seen["constant"] = torch_helper._is_constant(dim)
        seen["i"] = torch_helper._get_const(dim, "i", "dim")
        seen["is"] = torch_helper._maybe_get_const(
            g.op("Constant", value_t=torch.tensor([1, 2])), "is")
        seen["value"] = torch_helper._node_get(dim.node(), "value").tolist()
        return opset11.unsqueeze(g, x, dim)

    torchonnx.register_custom_op_symbolic("custom_ops::add_dim", add_dim, 11)
    registered.append(("custom_ops::add_dim", 11))

    class M(nn.Module):
        def forward(self, x):
            return torch.ops.custom_ops.add_dim(x)

    x = torch.randn(2, 3)
    f = io.BytesIO()
    torchonnx.export(M(), x, f, opset_version=13)
    assert seen == {"constant": True, "i": 1, "is": [1, 2], "value": 1}
    run_in_ort(f.getvalue(), [x], [M()(x)])


def test_torchvision_symbolics_nms_roi_align_roi_pool():
    # torchvision's own ONNX symbolics (torchvision/ops/_register_onnx_ops.py, registered through
    # torch.onnx.register_custom_op_symbolic) call torch.onnx's select/squeeze/unsqueeze on the
    # values they make. Registered with torchonnx (patch_torch_onnx routes torch.onnx's
    # registration), they replace torchonnx's built-in converters of these ops.
    torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed")
    from torchvision.ops import _register_onnx_ops

    ops = [("torchvision::nms", 11), ("torchvision::roi_align", 11),
           ("torchvision::roi_align", 16), ("torchvision::roi_pool", 11)]
    with torchonnx.patch_torch_onnx():
        _register_onnx_ops._register_custom_op()
    try:
        torch.manual_seed(0)
        boxes = torch.rand(50, 4) * 40
        boxes[:, 2:] += boxes[:, :2]
        scores = torch.randn(50)
        idxs = torch.randint(0, 3, (50,))

        class Nms(nn.Module):
            def forward(self, boxes, scores, idxs):
                return (torchvision.ops.nms(boxes, scores, 0.5),
                        torchvision.ops.batched_nms(boxes, scores, idxs, 0.4))

        x = torch.rand(2, 4, 16, 16)
        rois = torch.tensor([[0, 0.5, 1.0, 9.0, 7.5], [1, 2.2, 0.3, 14.5, 12.0],
                             [1, 0.0, 0.0, 4.0, 4.0]])
        cases = [
            (Nms(), (boxes, scores, idxs), 13),
            (torchvision.ops.RoIAlign((3, 3), 1.0, 2), (x, rois), 11),
            (torchvision.ops.RoIPool((3, 3), 2.0), (x, rois), 13),
        ]
        if hasattr(_register_onnx_ops, "roi_align_opset16"):
            # Opset 16's RoiAlign (coordinate_transformation_mode, half_pixel by default) through
            # torchvision's opset-16 symbolic (0.21). torchvision 0.14 has none: its opset-11
            # symbolic leaves the mode to its default there, aligned whatever `aligned` says, and
            # exports aligned=True as unaligned below 16 (for torch.onnx as well).
            cases.append((torchvision.ops.RoIAlign((5, 4), 0.5, 2, aligned=True), (x, rois), 16))
            cases.append((torchvision.ops.RoIAlign((2, 2), 1.0, 2), (x, rois), 17))
        for model, args, opset in cases:
            f = io.BytesIO()
            torchonnx.export(model, args, f, opset_version=opset)
            op_types = OnnxModel(f.getvalue()).op_types
            assert "If" not in op_types, (type(model).__name__, opset, op_types)
            run_in_ort(f.getvalue(), list(args), model(*args))
    finally:
        for name, opset in ops:
            torchonnx.unregister_custom_op_symbolic(name, opset)


def test_invalid_node_is_a_checker_error(registered):
    # A symbolic that writes a node onnx's checker rejects: CheckerError, where torch.onnx raises
    # it, with the checker's message.
    torchonnx.register_custom_op_symbolic(
        "custom_ops::foo_forward", lambda g, a, b, x, y: g.op("Relu", a, no_such_attr_i=3), 9)
    registered.append(("custom_ops::foo_forward", 9))
    with pytest.raises(TORCH_CHECKER_ERROR) as e:
        torchonnx.export(FooModel(1.0, 1), (torch.randn(2), torch.randn(2)), io.BytesIO())
    assert isinstance(e.value, torchonnx.errors.CheckerError) and e.value.code == 6
    assert "Unrecognized attribute: no_such_attr for operator Relu" in str(e.value)


def test_none_result_is_an_error(registered):
    torchonnx.register_custom_op_symbolic("custom_ops::foo_forward", lambda g, *a: None, 9)
    registered.append(("custom_ops::foo_forward", 9))
    with pytest.raises(torchonnx.errors.SymbolicValueError, match="returned None"):
        torchonnx.export(FooModel(1.0, 1), (torch.randn(2), torch.randn(2)), io.BytesIO())


def test_registration_errors():
    with pytest.raises(torchonnx.errors.OnnxExporterError, match="onnx"):
        torchonnx.register_custom_op_symbolic("onnx::Foo", lambda g, x: x, 9)
    with pytest.raises(ValueError):
        torchonnx.register_custom_op_symbolic("no_namespace", lambda g, x: x, 9)
    with pytest.raises(torchonnx.errors.InvalidArgumentError, match="not callable"):
        torchonnx.register_custom_op_symbolic("custom_ops::x", 42, 9)


# torch.autograd.Functions (prim::PythonOp), the documentation's "Static Symbolic Method" and
# "PythonOp Symbolic" examples.


class MyRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def symbolic(g: torch._C.Graph, input: torch._C.Value) -> torch._C.Value:
        return g.op("Clip", input, g.op("Constant", value_t=torch.tensor(0, dtype=torch.float)))


def test_autograd_function_static_symbolic():
    class M(nn.Module):
        def forward(self, x):
            return MyRelu.apply(x) * 2

    x = torch.randn(3, 4)
    f = io.BytesIO()
    torchonnx.export(M(), x, f)
    assert "Clip" in OnnxModel(f.getvalue()).op_types
    run_in_ort(f.getvalue(), [x], [M()(x)])


class MyClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, min):
        ctx.save_for_backward(input)
        return input.clamp(min=min)


class MyRelu2(torch.autograd.Function):  # the documentation's second MyRelu: no symbolic method
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)


def test_python_op_symbolic_with_context(capsys):
    seen = []

    # As the documentation writes it, but for torch.onnx.symbolic_helper's `is_value`, which torch
    # names `_is_value`, and `n.type()`, which a torch._C.Node does not have (`n.output().type()`).
    def symbolic_python_op(ctx: SymbolicContext, g: torch._C.Graph, *args, **kwargs):
        n = ctx.cur_node
        print("original node: ", n)
        for i, out in enumerate(n.outputs()):
            print("original output {}: {}".format(i, out, out.requiresGrad()))
        import torch.onnx.symbolic_helper as sym_helper
        for i, arg in enumerate(args):
            requires_grad = arg.requiresGrad() if sym_helper._is_value(arg) else False
            print("arg {}: {}".format(i, arg, requires_grad))

        name = kwargs["name"]
        seen.append(name)
        ret = None
        if name == "MyClip":
            ret = g.op("Clip", args[0], args[1])
        elif name == "MyRelu2":
            ret = g.op("Relu", args[0])
        else:
            # Logs a warning and returns None
            return None
        # Copy type and shape from original node.
        ret.setType(n.output().type())
        return ret

    torchonnx.register_custom_op_symbolic("prim::PythonOp", symbolic_python_op, 1)
    try:
        class M(nn.Module):
            def forward(self, x, low):
                return MyRelu2.apply(MyClip.apply(x, low)) + 1

        x, low = torch.randn(3, 4), torch.tensor(-0.25)
        f = io.BytesIO()
        torchonnx.export(M(), (x, low), f)
        assert seen == ["MyClip", "MyRelu2"]
        assert "original node: " in capsys.readouterr().out
        m = OnnxModel(f.getvalue())
        assert "Clip" in m.op_types and "Relu" in m.op_types
        run_in_ort(f.getvalue(), [x, low], [M()(x, low)])
    finally:
        torchonnx.unregister_custom_op_symbolic("prim::PythonOp", 1)

    # Without the context, as PyTorch's test_auto_grad writes it: fn(g, *inputs, name=...).
    def plain_python_op(g, *args, **kwargs):
        if kwargs["name"] == "MyClip":
            return g.op("Clip", args[0], args[1])
        return g.op("Relu", args[0])

    torchonnx.register_custom_op_symbolic("prim::PythonOp", plain_python_op, 1)
    try:
        f = io.BytesIO()
        torchonnx.export(M(), (x, low), f)
        run_in_ort(f.getvalue(), [x, low], [M()(x, low)])
    finally:
        torchonnx.unregister_custom_op_symbolic("prim::PythonOp", 1)

    # Unregistered, and the Functions have no symbolic method: their traced forwards are inlined,
    # as torch.onnx's autograd_inlining does.
    f = io.BytesIO()
    torchonnx.export(M(), (x, low), f)
    run_in_ort(f.getvalue(), [x, low], [M()(x, low)])


def test_python_op_symbolic_gets_non_tensor_arguments():
    # apply(x, 2): the registered prim::PythonOp symbolic gets the Function's arguments in order,
    # the 2 as the Python int it was (torch.onnx's form; PyTorch's test_register_op).
    def python_op(g, *args, **kwargs):
        assert kwargs["name"] == "MyClip"
        assert isinstance(args[1], int) and args[1] == 2
        return g.op("Clip", args[0], min_f=args[1])

    class M(nn.Module):
        def forward(self, x):
            return MyClip.apply(x, 2)

    torchonnx.register_custom_op_symbolic("prim::PythonOp", python_op, 1)
    try:
        x = torch.randn(3, 4) * 4
        f = io.BytesIO()
        torchonnx.export(M(), (x,), f, opset_version=10)
        assert "Clip" in OnnxModel(f.getvalue()).op_types
        run_in_ort(f.getvalue(), [x], [M()(x)])
    finally:
        torchonnx.unregister_custom_op_symbolic("prim::PythonOp", 1)


class ScaledSoftplus(torch.autograd.Function):  # two outputs, no symbolic method
    @staticmethod
    def forward(ctx, x, scale):
        y = torch.nn.functional.softplus(x) * scale
        return y, y.sum(dim=-1)


def test_autograd_function_without_symbolic_is_inlined():
    class M(nn.Module):
        def forward(self, x, scale):
            y, total = ScaledSoftplus.apply(x, scale)
            return y - 1, total

    x, scale = torch.randn(3, 4), torch.tensor(0.5)
    f = io.BytesIO()
    torchonnx.export(M(), (x, scale), f)
    assert "Softplus" in OnnxModel(f.getvalue()).op_types
    run_in_ort(f.getvalue(), [x, scale], list(M()(x, scale)))


class ClampModel(torch.nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=-0.5, max=0.5)


def test_aten_fallback_when_a_symbolic_raises(registered):
    # ONNX_ATEN_FALLBACK: a symbolic that refuses (torch.onnx's _onnx_unsupported raises a
    # RuntimeError) gives an ATen node, whose overload_name is torch.onnx's: the overload matched
    # once numbers are tensors (clamp.Tensor).
    def bad_clamp(g, self, min, max):
        return torch.onnx.symbolic_helper._onnx_unsupported("Bad boy!")

    torchonnx.register_custom_op_symbolic("aten::clamp", bad_clamp, 17)
    registered.append(("aten::clamp", 17))
    f = io.BytesIO()
    torchonnx.export(ClampModel(), torch.randn(3, 4), f, opset_version=17,
                     operator_export_type=torchonnx.OperatorExportTypes.ONNX_ATEN_FALLBACK)
    aten = [n for n in OnnxModel(f.getvalue()).nodes if n["op_type"] == "ATen"]
    assert [(n["domain"], n["attributes"]["operator"], n["attributes"]["overload_name"])
            for n in aten] == [("org.pytorch.aten", "clamp", "Tensor")]


def _aten_overloads(export, model, x):
    f = io.BytesIO()
    export(model, x, f, opset_version=17, do_constant_folding=False,
           operator_export_type=torch.onnx.OperatorExportTypes.ONNX_ATEN)
    return [(n["attributes"]["operator"], n["attributes"].get("overload_name", ""))
            for n in OnnxModel(f.getvalue()).nodes if n["op_type"] == "ATen"]


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def test_aten_node_overload_names_are_torch_onnxs():
    # ATen nodes name the overload torch.onnx names (it erases number types before its
    # symbolics): the overload matching with int/float/bool arguments as tensors, or "".
    cases = [
        (lambda x: torch.clamp(x, min=-0.5, max=0.5), [("clamp", "Tensor")]),
        (lambda x: torch.clamp(x, min=-0.5), [("clamp", "Tensor")]),
        (lambda x: x + x, [("add", "")]),
        (lambda x: x + 1, [("add", "")]),
        (lambda x: torch.fmod(x, 2.0), [("fmod", "Tensor")]),
        (lambda x: x ** 2, [("pow", "Tensor_Tensor")]),
        (lambda x: torch.softmax(x, 1), [("softmax", "")]),
        (lambda x: torch.where(x > 0, x, 0.0), [("gt", "Tensor"), ("where", "self")]),
        (lambda x: torch.div(x, 2, rounding_mode="floor"), [("div", "Tensor_mode")]),
        (lambda x: x * x.size(0), [("size", ""), ("mul", "Tensor")]),
    ]
    x = torch.randn(3, 4)
    for fn, expected in cases:
        assert _aten_overloads(torchonnx.export, _Fn(fn), x) == expected
