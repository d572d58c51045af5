"""torchonnx's Python API, function by function, with torch.onnx's semantics: the argument forms
of export(), where it writes, its options, the training mode, the export state, the log, the
pretty string, unconvertible_ops and operators.shape_as_tensor. Each export runs in ONNX Runtime
against eager PyTorch."""

import copy
import io
import warnings
from typing import List, Optional, Tuple

import pytest
import torch
import torch.nn as nn

import torchonnx
from conftest import OnnxModel, run_in_ort


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


def test_same_enums_as_torch_onnx():
    assert torchonnx.TrainingMode is torch.onnx.TrainingMode
    assert torchonnx.OperatorExportTypes is torch.onnx.OperatorExportTypes


def test_export_to_bytesio():
    model, x = Linear(), torch.randn(2, 4)
    f = io.BytesIO()
    torchonnx.export(model, x, f)
    data = f.getvalue()
    m = OnnxModel(data)
    # Parameters are initializers named by their state_dict names.
    assert sorted(m.initializers) == ["fc.bias", "fc.weight"]
    assert m.opsets[""] == 17  # torchonnx's default opset
    run_in_ort(data, [x], [model(x)])


def test_export_to_path_and_pathlike(tmp_path):
    model, x = Linear(), torch.randn(2, 4)
    torchonnx.export(model, (x,), str(tmp_path / "a.onnx"))
    torchonnx.export(model, (x,), tmp_path / "b.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()
    run_in_ort(tmp_path / "a.onnx", [x], [model(x)])


def test_args_nested_tuples_lists_and_kwargs():
    class M(nn.Module):
        def forward(self, a, pair, items, scale=2.0, bias=None):
            x, (y, z) = pair
            out = a + x * y - z + items[0] * items[1] * scale
            if bias is not None:
                out = out + bias
            return out, [out.sum(), (out * 2,)]

    a, x, y, z = (torch.randn(2, 3) for _ in range(4))
    items = [torch.randn(2, 3), torch.randn(2, 3)]
    bias = torch.randn(2, 3)
    f = io.BytesIO()
    # A trailing dict holds keyword arguments: bias by name, scale from its default — a number,
    # which becomes an input as torch.onnx makes it (a 0-d double tensor).
    torchonnx.export(M(), (a, (x, (y, z)), items, {"bias": bias}), f)
    m = OnnxModel(f.getvalue())
    assert len(m.inputs) == 8  # a, x, y, z, items[0], items[1], scale, bias
    assert len(m.outputs) == 3  # out, out.sum(), out * 2: nested outputs flattened
    expected = M()(a, (x, (y, z)), items, 2.0, bias)
    run_in_ort(f.getvalue(), [a, x, y, z, *items, torch.tensor(2.0, dtype=torch.float64), bias],
               expected)


def test_dict_and_string_arguments_and_default_input_names():
    # As torch.onnx: a dict argument's values are inputs (its keys fixed at tracing), a string is
    # fixed at tracing; the inputs are named after forward()'s arguments.
    class M(nn.Module):
        def forward(self, x, pair, d, mode: str = "add"):
            y = pair[0] * pair[1] + d["a"] - d["b"]
            return x + y if mode == "add" else x - y

    x, p0, p1, a, b = (torch.randn(2, 3) for _ in range(5))
    f = io.BytesIO()
    torchonnx.export(M(), (x, (p0, p1), {"a": a, "b": b}, "sub"), f)
    m = OnnxModel(f.getvalue())
    assert m.input_names == ["x", "pair_0", "pair_1", "d_0", "d_1"]
    run_in_ort(f.getvalue(), [x, p0, p1, a, b], [x - (p0 * p1 + a - b)])


def test_dict_tensor_key_is_an_input():
    # torch.jit._flatten walks a dict's (key, value) items: a tensor key is a graph input, before
    # its value, and the model reads it there (PyTorch's test_dict).
    class M(nn.Module):
        def forward(self, d):
            key = list(d.keys())[0]
            return d[key] * key

    k, v = torch.tensor(2.0), torch.randn(2, 3)
    f = io.BytesIO()
    torchonnx.export(M(), ({k: v}, {}), f)
    assert len(OnnxModel(f.getvalue()).inputs) == 2
    k2 = torch.tensor(-3.0)
    run_in_ort(f.getvalue(), [k2, v], [v * k2])


def test_kwargs_of_torch2():
    class M(nn.Module):
        def forward(self, x, y=None):
            return x if y is None else x - y

    x, y = torch.randn(3), torch.randn(3)
    f = io.BytesIO()
    torchonnx.export(M(), (x,), f, kwargs={"y": y})
    run_in_ort(f.getvalue(), [x, y], [x - y])


def test_script_module_with_none_for_an_optional_argument():
    # torch.onnx's callers pass None for an optional argument (and _decide_input_format fills
    # defaults in): the argument is a constant, not an ONNX input (a typeless one failed onnx's
    # checker). Here a List[List[Tensor]] state, as a transducer predictor takes.
    class M(nn.Module):
        def forward(self, x, state: Optional[List[List[torch.Tensor]]] = None):
            if state is None:
                return x * 2.0
            return x + state[0][1]

    m, x = torch.jit.script(M()), torch.randn(2, 3)
    for args in ((x, None), (x,)):
        f = io.BytesIO()
        torchonnx.export(m, args, f)
        assert len(OnnxModel(f.getvalue()).inputs) == 1
        run_in_ort(f.getvalue(), [x], [x * 2.0])


def test_script_module_optional_arguments_left_out_are_none():
    # Note [Optional arguments of a scripted model]: an Optional argument not given is None (as
    # ONNX Runtime takes torch.onnx's optional input left out), not its default; None given for
    # an argument whose default is not None is refused in torch.onnx's words.
    class M(nn.Module):
        def forward(self, x: Optional[torch.Tensor] = torch.ones(2, 3),
                    y: Optional[torch.Tensor] = torch.zeros(2, 3)):
            if x is not None:
                return x if y is None else x + y
            if y is not None:
                return y * 3.0
            return torch.tensor(-1.0)

    m, x, y = torch.jit.script(M()), torch.randn(2, 3), torch.randn(2, 3)
    for args, feed, expected in (((x,), [x], x),  # y left out: None, not zeros
                                 (({"y": y},), [y], y * 3.0),  # x left out before y
                                 ((x, {"y": y}), [x, y], x + y)):
        f = io.BytesIO()
        torchonnx.export(m, args, f)
        assert len(OnnxModel(f.getvalue()).inputs) == len(feed)
        run_in_ort(f.getvalue(), feed, [expected])

    class Pair(nn.Module):
        def forward(self, x, ys: Tuple[Optional[torch.Tensor], Optional[torch.Tensor]] = (
                torch.zeros(2, 3), torch.zeros(2, 3))):
            y0, y1 = ys
            return x if y0 is None or y1 is None else x + y0 - y1

    for model, args in ((m, (x, None)), (torch.jit.script(Pair()), (x, (None, y)))):
        with pytest.raises(ValueError, match="args contained 1 None's after flattening"):
            torchonnx.export(model, args, io.BytesIO())


def test_several_script_functions_in_one_process():
    # Each ScriptFunction is exported through a module of its own: a second one (or the same one
    # again) failed with "Can't redefine method: forward" (PyTorch's test_to__cpu_string).
    @torch.jit.script
    def plus_one(x):
        return x + 1

    @torch.jit.script
    def twice(x):
        return x * 2

    x = torch.randn(3)
    for fn, expected in ((plus_one, x + 1), (twice, x * 2), (plus_one, x + 1)):
        f = io.BytesIO()
        torchonnx.export(fn, (x,), f)
        run_in_ort(f.getvalue(), [x], [expected])


def test_number_arguments_become_inputs():
    class M(nn.Module):
        def forward(self, x, n: int, s: float):
            return x * n + s

    x = torch.randn(2, 2)
    f = io.BytesIO()
    torchonnx.export(M(), (x, 3, 0.5), f, input_names=["x", "n", "s"])
    m = OnnxModel(f.getvalue())
    assert m.input_names == ["x", "n", "s"]
    assert m.inputs[1]["elem_type"] == 7 and m.inputs[1]["dims"] == []  # int64 scalar
    five = torch.tensor(5)
    run_in_ort(f.getvalue(), [x, five, torch.tensor(0.25, dtype=torch.float64)], [x * 5 + 0.25])


def test_script_module_and_script_function(tmp_path):
    @torch.jit.script
    def clamp_loop(x, n: int):
        for _ in range(n):
            x = torch.clamp(x * 2, -1.0, 1.0)
        return x

    class Scripted(nn.Module):
        def forward(self, x, n: int):
            for _ in range(n):
                x = x + 1
            return x

    x = torch.randn(2, 3)
    torchonnx.export(clamp_loop, (x, 3), tmp_path / "f.onnx", input_names=["x", "n"])
    m = OnnxModel(tmp_path / "f.onnx")
    assert "Loop" in m.op_types
    run_in_ort(tmp_path / "f.onnx", [x, torch.tensor(5)], [clamp_loop(x, 5)])

    scripted = torch.jit.script(Scripted())
    torchonnx.export(scripted, (x, {"n": 2}), tmp_path / "m.onnx")  # n by keyword
    run_in_ort(tmp_path / "m.onnx", [x, torch.tensor(4)], [scripted(x, 4)])
    # A one-element tensor stands for an int argument (as torch.onnx passes numbers).
    torchonnx.export(scripted, (x, torch.tensor(3)), tmp_path / "t.onnx")
    run_in_ort(tmp_path / "t.onnx", [x, torch.tensor(6)], [scripted(x, 6)])


def test_training_modes_and_mode_restored():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(self.bn(x))

    x = torch.randn(4, 3)
    model = M()
    model.train()
    f = io.BytesIO()
    torchonnx.export(model, x, f)  # EVAL (the default): eval for the export, train after
    assert model.training and model.bn.training
    m = OnnxModel(f.getvalue())
    assert "Dropout" not in m.op_types
    model.eval()
    with torch.no_grad():
        run_in_ort(f.getvalue(), [x], [model(x)])

    model.train()
    f = io.BytesIO()
    torchonnx.export(model, x, f, training=torchonnx.TrainingMode.TRAINING, opset_version=13)
    assert "Dropout" in OnnxModel(f.getvalue()).op_types
    assert model.training

    model.eval()
    f = io.BytesIO()
    torchonnx.export(model, x, f, training=torchonnx.TrainingMode.PRESERVE)
    assert not model.training
    assert "Dropout" not in OnnxModel(f.getvalue()).op_types


def test_script_module_runs_once_as_torch_onnx_runs_it():
    # Note [A scripted model runs once]: the exported state is the module's after one run on the
    # example arguments in the exported training mode (torch.onnx's _get_example_outputs), so a
    # fresh BatchNorm exported for training carries stepped running statistics, as torch.onnx's
    # file does, and ONNX Runtime computes the batch statistics right (with a fresh layer's 0 and
    # 1 its constant sharing merges them with the weights, which training-mode
    # BatchNormalization then overwrites).
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn1 = nn.BatchNorm2d(3, affine=False)
            self.cv1 = nn.Conv2d(3, 3, 10)
            self.bn2 = nn.BatchNorm2d(3, affine=True)

        def forward(self, x):
            return self.bn2(self.cv1(self.bn1(x)))

    torch.manual_seed(0)
    x = torch.randn(10, 3, 20, 20) * 2
    model = torch.jit.script(M())
    model.train()
    stepped = torch.jit.script(M())
    stepped.load_state_dict(model.state_dict())
    stepped.train()
    with torch.no_grad():
        expected = stepped(x)  # the reference; steps `stepped` as the export steps `model`
    f = io.BytesIO()
    torchonnx.export(model, (x,), f, training=torchonnx.TrainingMode.TRAINING, opset_version=15)
    for name, value in stepped.state_dict().items():
        assert torch.equal(model.state_dict()[name], value), name
    assert int(model.bn1.num_batches_tracked) == 1
    run_in_ort(f.getvalue(), [x], [expected])


def test_script_module_run_once_keeps_reassigned_attributes():
    # Note [A scripted model runs once]: torch.onnx holds the module's tensors before its run, so
    # an attribute the forward assigns anew is exported with its value before the run (the
    # reference is the model's first run), while in-place updates are kept.
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 3, 3)
            self.register_buffer("steps", torch.zeros(1))

        def forward(self, x):
            self.steps.add_(1)
            b = self.conv.bias
            assert b is not None
            self.conv.bias = b + 1.0
            return self.conv(x) + self.steps

    torch.manual_seed(0)
    model, x = torch.jit.script(M()), torch.randn(2, 4, 6)
    bias = model.conv.bias.detach().clone()
    reference = copy.deepcopy(model)
    with torch.no_grad():
        expected = reference(x)
    f = io.BytesIO()
    torchonnx.export(model, (x,), f, opset_version=13)
    assert torch.equal(model.conv.bias.detach(), bias)  # set back
    assert float(model.steps) == 1.0  # changed in place: kept, as torch.onnx keeps it
    run_in_ort(f.getvalue(), [x], [expected + 1.0])  # the steps the export's run took


def test_script_module_list_output_is_one_sequence():
    # A ScriptModule's returned list of tensors is one output, an ONNX sequence (opset 11+), as
    # torch.onnx returns it; its type is the elements' dtype and their common shape, a dim that
    # differs between them (or is dynamic in one) unknown (torch.onnx's
    # test_utility_funs.test_sequence_dim).
    class M(nn.Module):
        def forward(self, x, y):
            return [x, y]

    m, x, y = torch.jit.script(M()), torch.randn(2, 3), torch.randn(2, 3)
    for dynamic_axes, dims in (({"y": [1]}, [2, None]), (None, [2, 3])):
        f = io.BytesIO()
        torchonnx.export(m, (x, y), f, opset_version=13, input_names=["x", "y"],
                         dynamic_axes=dynamic_axes)
        out = OnnxModel(f.getvalue()).outputs
        assert len(out) == 1 and out[0]["sequence"], out
        assert out[0]["elem_type"] == 1 and out[0]["dims"] == dims, out
        run_in_ort(f.getvalue(), [x, y], [x, y])
    f = io.BytesIO()
    torchonnx.export(m, (x, y), f, opset_version=10)  # no sequences below 11: two outputs
    assert [o["sequence"] for o in OnnxModel(f.getvalue()).outputs] == [False, False]


def test_select_model_mode_for_export():
    model = Linear()
    model.train()
    with torchonnx.select_model_mode_for_export(model, torchonnx.TrainingMode.EVAL):
        assert not model.training and not model.fc.training
    assert model.training and model.fc.training
    model.eval()
    with torchonnx.select_model_mode_for_export(model, torchonnx.TrainingMode.TRAINING):
        assert model.training
    assert not model.training
    with torchonnx.select_model_mode_for_export(model, torchonnx.TrainingMode.PRESERVE):
        assert not model.training
    with pytest.raises(TypeError, match="TrainingMode"):
        with torchonnx.select_model_mode_for_export(model, "eval"):
            pass


def test_is_in_onnx_export():
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append((torchonnx.is_in_onnx_export(), torch.onnx.is_in_onnx_export()))
            # A model can branch on it, as torch.onnx documents.
            return x * 2 if torchonnx.is_in_onnx_export() else x * 3

    assert not torchonnx.is_in_onnx_export()
    x = torch.randn(3)
    f = io.BytesIO()
    torchonnx.export(M(), x, f)
    assert seen == [(True, True)]
    assert not torchonnx.is_in_onnx_export() and not torch.onnx.is_in_onnx_export()
    run_in_ort(f.getvalue(), [x], [x * 2])
    # Also false after a failed export.
    with pytest.raises(torchonnx.errors.OnnxExporterError):
        torchonnx.export(M(), x, io.BytesIO(), opset_version=3)
    assert not torchonnx.is_in_onnx_export()


def test_dynamic_axes_dict_and_list_forms():
    class M(nn.Module):
        def forward(self, x):
            return x.sum(1, keepdim=True) * x

    x = torch.randn(2, 5)
    f = io.BytesIO()
    torchonnx.export(M(), x, f, input_names=["x"], output_names=["y"],
                     dynamic_axes={"x": {0: "batch", 1: "features"}, "y": {0: "batch"}})
    m = OnnxModel(f.getvalue())
    assert m.inputs[0]["dims"] == ["batch", "features"]
    assert m.outputs[0]["dims"][0] == "batch"
    other = torch.randn(4, 7)
    run_in_ort(f.getvalue(), [other], [M()(other)])

    f = io.BytesIO()
    torchonnx.export(M(), x, f, input_names=["x"], output_names=["y"],
                     dynamic_axes={"x": [0, 1], "y": [0, 1]})
    m = OnnxModel(f.getvalue())
    # torch.onnx's names for the list form.
    assert m.inputs[0]["dims"] == ["x_dynamic_axes_1", "x_dynamic_axes_2"]
    run_in_ort(f.getvalue(), [other], [M()(other)])


def test_shape_as_tensor_keeps_shapes_dynamic():
    from torchonnx import operators

    class M(nn.Module):
        def forward(self, x):
            shape = operators.shape_as_tensor(x)
            return operators.reshape_from_tensor_shape(x.flatten(), shape) + shape[0]

    x = torch.randn(2, 3)
    assert operators.shape_as_tensor(x).tolist() == [2, 3]
    f = io.BytesIO()
    torchonnx.export(M(), x, f, input_names=["x"], dynamic_axes={"x": [0, 1]})
    assert "Shape" in OnnxModel(f.getvalue()).op_types
    other = torch.randn(5, 4)
    run_in_ort(f.getvalue(), [other], [M()(other)])


def test_export_params_and_keep_initializers():
    model, x = Linear(), torch.randn(2, 4)
    f = io.BytesIO()
    torchonnx.export(model, x, f, export_params=False)
    m = OnnxModel(f.getvalue())
    assert m.initializers == [] and len(m.inputs) == 3
    run_in_ort(f.getvalue(), [x, model.fc.weight, model.fc.bias], [model(x)])

    f = io.BytesIO()
    torchonnx.export(model, x, f, keep_initializers_as_inputs=True)
    m = OnnxModel(f.getvalue())
    assert sorted(m.initializers) == ["fc.bias", "fc.weight"]
    assert set(m.input_names) >= {"fc.bias", "fc.weight"}


def test_operator_export_type_aten():
    class M(nn.Module):
        def forward(self, x):
            return torch.exp(x) / x

    x = torch.rand(3) + 0.5
    text = torchonnx.export_to_pretty_string(
        M(), x, operator_export_type=torchonnx.OperatorExportTypes.ONNX_ATEN)
    assert 'operator="exp"' in text and 'operator="div"' in text
    text = torchonnx.export_to_pretty_string(M(), x)
    assert "onnx::Exp" in text and "onnx::Div" in text


def test_export_to_pretty_string_formats():
    model, x = Linear(), torch.randn(2, 4)
    text = torchonnx.export_to_pretty_string(model, (x,), input_names=["x"])
    assert text.startswith("graph(") or "graph(" in text
    assert "%x : Float(2, 4" in text and "onnx::Gemm" in text
    dot = torchonnx.export_to_pretty_string(model, (x,), format="dot")
    assert dot.lstrip().startswith("digraph")


def test_export_modules_as_functions():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return torch.tanh(self.fc(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = Block(), Block()

        def forward(self, x):
            return self.b(self.a(x))

    net, x = Net(), torch.randn(2, 4)
    f = io.BytesIO()
    torchonnx.export(net, x, f, opset_version=15, export_modules_as_functions={Block})
    m = OnnxModel(f.getvalue())
    assert m.functions == ["Block"]
    assert [n["op_type"] for n in m.nodes].count("Block") == 2
    run_in_ort(f.getvalue(), [x], [net(x)])


def test_export_modules_as_functions_true():
    # True: every module type the model calls (those whose ops all vanish, as eval's Dropout and
    # Identity, make no function), the model's own class included, as torch.onnx.
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.drop, self.id = nn.Linear(4, 4), nn.Dropout(), nn.Identity()

        def forward(self, x):
            return self.id(self.drop(torch.relu(self.fc(x))))

    net, x = nn.Sequential(Block(), Block()), torch.randn(2, 4)
    f = io.BytesIO()
    torchonnx.export(net, x, f, opset_version=15, export_modules_as_functions=True)
    m = OnnxModel(f.getvalue())
    assert sorted(m.functions) == ["Block", "Linear", "Sequential"]
    assert m.op_types == ["Sequential"]
    net.eval()
    run_in_ort(f.getvalue(), [x], [net(x)])


def test_log(capfd):
    model, x = Linear(), torch.randn(2, 4)
    assert not torchonnx.is_onnx_log_enabled()
    torchonnx.export(model, x, io.BytesIO())
    assert "torchonnx:" not in capfd.readouterr().err
    torchonnx.enable_log()
    try:
        assert torchonnx.is_onnx_log_enabled()
        torchonnx.set_log_stream("stdout")
        torchonnx.log("hello", 1)
        torchonnx.export(model, x, io.BytesIO())
        out = capfd.readouterr()
        assert "hello 1\n" in out.out
        assert "torchonnx: exporting TorchScript module" in out.out
        torchonnx.set_log_stream("stderr")
        torchonnx.log("to stderr")
        assert "to stderr" in capfd.readouterr().err
        with pytest.raises(ValueError, match="stdout"):
            torchonnx.set_log_stream("nowhere")
    finally:
        torchonnx.set_log_stream("stderr")
        torchonnx.disable_log()
    assert not torchonnx.is_onnx_log_enabled()
    torchonnx.log("not written")
    assert "not written" not in capfd.readouterr().err


def test_unconvertible_ops_empty_and_training():
    graph, ops = torchonnx.unconvertible_ops(Linear(), (torch.randn(2, 4),))
    assert ops == []
    assert "aten::linear" in str(graph) or "aten::addmm" in str(graph)


def test_verbose_prints_graph(capfd):
    torchonnx.export(Linear(), torch.randn(2, 4), io.BytesIO(), verbose=True)
    printed = capfd.readouterr()
    assert "onnx::Gemm" in printed.err + printed.out


def test_doc_strings_only_with_verbose():
    # torch.onnx writes each node's doc_string (the op and its source line) only with verbose=True.
    f = io.BytesIO()
    torchonnx.export(Linear(), torch.randn(2, 4), f)
    assert [n["doc_string"] for n in OnnxModel(f.getvalue()).nodes] == ["", ""]
    f = io.BytesIO()
    torchonnx.export(Linear(), torch.randn(2, 4), f, verbose=True)
    docs = [n["doc_string"] for n in OnnxModel(f.getvalue()).nodes]
    assert len(docs) == 2 and all("aten::" in d for d in docs), docs


def test_unused_inputs_are_dropped_as_in_torch_onnx():
    # An input the exported graph does not read (used for its static shape only) is removed, as
    # torch.onnx removes it; input_names stay with the inputs they named.
    class ShapeOfX(nn.Module):
        def forward(self, x, y):
            return y + x.shape[0]

    class ZerosLike(nn.Module):
        def forward(self, x):
            return x.new_zeros(x.shape)

    x, y = torch.randn(2), torch.randn(2)
    for model in (ShapeOfX(), torch.jit.script(ShapeOfX())):
        f = io.BytesIO()
        torchonnx.export(model, (x, y), f, input_names=["a", "b"])
        assert OnnxModel(f.getvalue()).input_names == ["b"]
        run_in_ort(f.getvalue(), [y], [y + 2])
        # With a dynamic axis the graph reads x's shape at run time: x stays.
        f = io.BytesIO()
        torchonnx.export(model, (x, y), f, input_names=["a", "b"], dynamic_axes={"a": [0]})
        assert OnnxModel(f.getvalue()).input_names == ["a", "b"]
        run_in_ort(f.getvalue(), [torch.randn(5), y], [y + 5])
    f = io.BytesIO()
    torchonnx.export(ZerosLike(), torch.randn(2, 3), f)
    assert OnnxModel(f.getvalue()).input_names == []

    # A converter that reads an input for its shape keeps it (as torch.onnx keeps view_as's
    # `other`), also where the optimizer then folds that shape.
    class ViewAs(nn.Module):
        def forward(self, x, other):
            return x.view_as(other)

    x, other = torch.randn(2, 6), torch.randn(3, 4)
    f = io.BytesIO()
    torchonnx.export(ViewAs(), (x, other), f, input_names=["x", "other"])
    assert OnnxModel(f.getvalue()).input_names == ["x", "other"]
    run_in_ort(f.getvalue(), [x, other], [x.view_as(other)])


def test_made_up_names_step_aside_for_given_ones():
    # output_names=["output_1"] for a model of 3 outputs: the unnamed ones get output_K names that
    # differ from it (torch.onnx's test_slice_dynamic names only its first output).
    class Three(nn.Module):
        def forward(self, x):
            return x + 1, x + 2, x + 3

    x = torch.randn(2, 3)
    f = io.BytesIO()
    torchonnx.export(Three(), x, f, input_names=["output_0"], output_names=["output_1"],
                     dynamic_axes={"output_0": [0], "output_1": [0]})
    m = OnnxModel(f.getvalue())
    assert m.input_names == ["output_0"]
    assert m.output_names == ["output_1", "output_1_1", "output_2"]
    x5 = torch.randn(5, 3)
    run_in_ort(f.getvalue(), [x5], [x5 + 1, x5 + 2, x5 + 3])


def test_scripted_list_output_is_a_sequence():
    # A scripted model's List[Tensor] output is an ONNX sequence, as torch.onnx returns it (a
    # traced model's lists are flattened). ONNX Runtime's Node binding returns no sequences: the
    # Python one (Debian 13) runs it.
    ort = pytest.importorskip("onnxruntime")

    class Listed(nn.Module):
        def forward(self, x):
            return (x + 1).split(1)  # a List[Tensor] of 2 (a ListConstruct's are flattened)

    x = torch.randn(2, 3)
    f = io.BytesIO()
    torchonnx.export(torch.jit.script(Listed()), (x,), f, opset_version=13)
    session = ort.InferenceSession(f.getvalue())
    (listed,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    assert isinstance(listed, list) and len(listed) == 2
    torch.testing.assert_close(torch.from_numpy(listed[0]), x[:1] + 1)
    torch.testing.assert_close(torch.from_numpy(listed[1]), x[1:] + 1)
    with pytest.raises(torchonnx.errors.SymbolicValueError, match="opset 11"):
        torchonnx.export(torch.jit.script(Listed()), (x,), io.BytesIO(), opset_version=10)


def test_data_parallel_is_refused_with_torch_onnx_words():
    model = nn.DataParallel(nn.ReLU())
    with pytest.raises(ValueError, match="torch.nn.DataParallel is not supported by ONNX exporter"):
        torchonnx.export(model, torch.randn(2), io.BytesIO())


def test_deprecated_arguments_are_accepted_with_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torchonnx.export(Linear(), torch.randn(2, 4), io.BytesIO(), strip_doc_string=True,
                         add_node_names=False)
    assert any("strip_doc_string" in str(x.message) for x in w)
    assert any("add_node_names" in str(x.message) for x in w)
    with pytest.raises(TypeError, match="no_such_option"):
        torchonnx.export(Linear(), torch.randn(2, 4), io.BytesIO(), no_such_option=1)


def test_quantized_module_as_the_model():
    # The model is a quantized conv itself: copying it for the trace re-packs its weights, so the
    # traced forward must be the copy's (it was the original's: "Tried to trace
    # <ConvNdPackedParamsBase> but it is not part of the active trace", PyTorch's
    # test_quantized_conv2d).
    import torch.ao.nn.quantized as nnq

    torch.manual_seed(0)
    conv = nnq.Conv2d(3, 4, 3)
    x = torch.quantize_per_tensor(torch.randn(1, 3, 8, 8), 0.1, 128, torch.quint8)
    f = io.BytesIO()
    torchonnx.export(conv, (x,), f, opset_version=13)
    assert "Conv" in OnnxModel(f.getvalue()).op_types


def test_quantized_eager_model():
    # An eager model quantized with torch.ao.quantization traces and exports as
    # QuantizeLinear/DequantizeLinear; ONNX Runtime within one quantization step of the output.
    import torch.ao.quantization as q

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = q.QuantStub(), q.DeQuantStub()
            self.conv, self.relu, self.fc = nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Linear(4 * 6 * 6, 5)

        def forward(self, x):
            x = self.relu(self.conv(self.quant(x)))
            return self.dequant(self.fc(x.flatten(1)))

    torch.manual_seed(0)
    m = M().eval()
    m.qconfig = q.get_default_qconfig("fbgemm")
    q.prepare(m, inplace=True)
    m(torch.randn(8, 3, 8, 8))
    q.convert(m, inplace=True)
    x = torch.randn(2, 3, 8, 8)
    f = io.BytesIO()
    torchonnx.export(m, x, f, opset_version=13)
    ops = OnnxModel(f.getvalue()).op_types
    assert "QuantizeLinear" in ops and "Conv" in ops
    run_in_ort(f.getvalue(), [x], [m(x)], rtol=0, atol=1.01 * m.fc.scale, atol_scale=0)


def test_traced_export_leaves_torch_jit_types_alone():
    # Exporting an nn.Module traces it; the TorchScript types of the trace stay private, so that
    # a later torch.jit.script() of an equal model names its types as it would have (a ModuleList
    # type of a mangled name loses torch.onnx's "lns.0" scope names).
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lns = nn.ModuleList([nn.LayerNorm(3, eps=float(i + 1)) for i in range(2)])

        def forward(self, z):
            for ln in self.lns:
                z = ln(z)
            return z

    torchonnx.export(M(), (torch.randn(2, 3),), io.BytesIO(), opset_version=17)
    scripted = torch.jit.script(M())
    assert scripted.lns._c._type().name() == "ModuleList"
    assert "mangle" not in scripted.lns._c._type().qualified_name()
