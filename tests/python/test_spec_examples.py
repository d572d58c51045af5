"""The torch.onnx documentation's examples (../shared/spec/), through `import torchonnx`, with the
names and arguments they show; each exported model runs in ONNX Runtime against eager PyTorch.
Where the documentation's code cannot run as printed (CUDA, pretrained downloads, a typo), the
change is said in a comment."""

import torch
import torch.nn as nn

import torchonnx
from conftest import OnnxModel, run_in_ort


def test_alexnet(tmp_path, capfd, monkeypatch):
    # "Example: End-to-end AlexNet": on the CPU, random weights (pretrained=True downloads).
    import torchvision

    monkeypatch.chdir(tmp_path)
    torch.manual_seed(0)
    dummy_input = torch.randn(10, 3, 224, 224)
    model = torchvision.models.alexnet(weights=None)

    input_names = ["actual_input_1"] + ["learned_%d" % i for i in range(16)]
    output_names = ["output1"]

    torchonnx.export(model, dummy_input, "alexnet.onnx", verbose=True, input_names=input_names,
                     output_names=output_names)

    printed = capfd.readouterr()
    graph = printed.out + printed.err
    # verbose=True prints the graph in torch.onnx's format, with the names given.
    assert "%actual_input_1 : Float(10, 3, 224, 224" in graph
    assert "%learned_0 : Float(64, 3, 11, 11" in graph
    assert "onnx::Conv" in graph and "onnx::Gemm" in graph
    m = OnnxModel("alexnet.onnx")
    assert m.input_names == ["actual_input_1"]
    assert sorted(m.initializers) == sorted("learned_%d" % i for i in range(16))
    assert m.output_names == ["output1"]
    assert m.inputs[0]["dims"] == [10, 3, 224, 224]
    # The model was exported in eval mode and is back in its mode (training: a new module).
    assert model.training
    model.eval()
    with torch.no_grad():
        expected = model(dummy_input)
    run_in_ort("alexnet.onnx", [dummy_input], [expected])


def test_loop_model_trace_unrolls(tmp_path):
    # Tracing vs Scripting, trace-based: the loop is unrolled for the example's count.
    class LoopModel(torch.nn.Module):
        def forward(self, x, y):
            for i in range(y):
                x = x + i
            return x

    model = LoopModel()
    dummy_input = torch.ones(2, 3, dtype=torch.long)
    loop_count = torch.tensor(5, dtype=torch.long)

    torchonnx.export(model, (dummy_input, loop_count), tmp_path / "loop.onnx", verbose=True)

    m = OnnxModel(tmp_path / "loop.onnx")
    assert "Loop" not in m.op_types
    # The count is baked in: the graph no longer reads y, and (as in torch.onnx) y is no input.
    assert len(m.input_names) == 1
    run_in_ort(tmp_path / "loop.onnx", [dummy_input], [model(dummy_input, loop_count)])


@torch.jit.script
def loop(x, y):
    for i in range(int(y)):
        x = x + i
    return x


def test_loop_model2_script_in_trace(tmp_path):
    # Mixing tracing and scripting: the scripted loop stays an ONNX Loop.
    class LoopModel2(torch.nn.Module):
        def forward(self, x, y):
            return loop(x, y)

    model = LoopModel2()
    dummy_input = torch.ones(2, 3, dtype=torch.long)
    loop_count = torch.tensor(5, dtype=torch.long)
    torchonnx.export(model, (dummy_input, loop_count), tmp_path / "loop.onnx", verbose=True,
                     input_names=["input_data", "loop_range"])

    m = OnnxModel(tmp_path / "loop.onnx")
    assert m.input_names == ["input_data", "loop_range"]
    assert "Loop" in m.op_types
    # Another loop count than the example's: [[37 37 37] [37 37 37]] for 9, as the spec shows.
    nine = torch.tensor(9, dtype=torch.long)
    expected = model(dummy_input, nine)
    assert expected.tolist() == [[37, 37, 37], [37, 37, 37]]
    run_in_ort(tmp_path / "loop.onnx", [dummy_input, nine], [expected])


def test_lstm_dynamic_axes(tmp_path):
    # FAQ: "I have exported my lstm model, but its input size seems to be fixed?"
    layer_count = 4

    model = nn.LSTM(10, 20, num_layers=layer_count, bidirectional=True)
    model.eval()

    with torch.no_grad():
        input = torch.randn(5, 3, 10)
        h0 = torch.randn(layer_count * 2, 3, 20)
        c0 = torch.randn(layer_count * 2, 3, 20)
        output, (hn, cn) = model(input, (h0, c0))

        # default export
        torchonnx.export(model, (input, (h0, c0)), tmp_path / "lstm.onnx")
        onnx_model = OnnxModel(tmp_path / "lstm.onnx")
        # input shape [5, 3, 10]
        assert onnx_model.inputs[0]["dims"] == [5, 3, 10]
        assert len(onnx_model.inputs) == 3  # input, h0, c0: the tuple flattened

        # export with `dynamic_axes`
        torchonnx.export(model, (input, (h0, c0)), tmp_path / "lstm.onnx",
                         input_names=['input', 'h0', 'c0'],
                         output_names=['output', 'hn', 'cn'],
                         dynamic_axes={'input': {0: 'sequence'}, 'output': {0: 'sequence'}})
        onnx_model = OnnxModel(tmp_path / "lstm.onnx")
        # input shape ['sequence', 3, 10]
        assert onnx_model.inputs[0]["dims"] == ["sequence", 3, 10]
        assert onnx_model.outputs[0]["dims"][0] == "sequence"

        run_in_ort(tmp_path / "lstm.onnx", [input, h0, c0], [output, hn, cn])
        # A sequence of another length than the example's.
        longer = torch.randn(9, 3, 10)
        run_in_ort(tmp_path / "lstm.onnx", [longer, h0, c0], model(longer, (h0, c0)))


def test_implicit_cast_script_module(tmp_path):
    # FAQ: implicit scalar datatype casting in a ScriptModule (example_outputs is accepted, as
    # the documentation passes it, and has no effect).
    class ImplicitCastType(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, x):
            y = x + 2
            return y + 3

    x = torch.tensor([1.0], dtype=torch.float32)
    path = tmp_path / "implicit_cast.onnx"
    torchonnx.export(ImplicitCastType(), x, path, example_outputs=ImplicitCastType()(x))
    m = OnnxModel(path)
    assert m.outputs[0]["elem_type"] == 1  # float: 3 was cast to x's type
    run_in_ort(path, [x], [ImplicitCastType()(x)])


def test_in_place_indexed_assignment(tmp_path):
    # FAQ: "Is tensor in-place indexed assignment like data[index] = new_data supported?"
    data = torch.zeros(3, 4)
    new_data = torch.arange(4).to(torch.float32)

    class InPlaceIndexedAssignment(torch.nn.Module):
        def forward(self, data, new_data):
            data[1] = new_data
            return data

    out = InPlaceIndexedAssignment()(data, new_data)

    data = torch.zeros(3, 4)
    new_data = torch.arange(4).to(torch.float32)
    torchonnx.export(InPlaceIndexedAssignment(), (data, new_data), tmp_path / "inplace_assign.onnx",
                     opset_version=11)
    run_in_ort(tmp_path / "inplace_assign.onnx", [torch.zeros(3, 4), new_data], [out])


def test_list_loop_model(tmp_path):
    # FAQ: "Is tensor list exportable to ONNX?" The documentation writes `res = res.append(...)`,
    # which TorchScript rejects (append returns None): here `res.append(...)`.
    class ListLoopModel(torch.nn.Module):
        def forward(self, x):
            res = []
            res1 = []
            arr = x.split(2, 0)
            res2 = torch.zeros(3, 4, dtype=torch.long)
            for i in range(len(arr)):
                res.append(arr[i].sum(0, False))
                res1.append(arr[-1 - i].sum(0, False))
                res2 += 1
            return torch.stack(res), torch.stack(res1), res2

    model = torch.jit.script(ListLoopModel())
    inputs = torch.randn(16)

    out = model(inputs)
    torchonnx.export(model, (inputs, ), tmp_path / "loop_and_list.onnx", opset_version=11,
                     example_outputs=out)
    run_in_ort(tmp_path / "loop_and_list.onnx", [inputs], list(out))
    # With a dynamic length, the loop's trip count follows the input.
    torchonnx.export(model, (inputs, ), tmp_path / "dynamic.onnx", opset_version=11,
                     input_names=["x"], dynamic_axes={"x": [0]})
    longer = torch.randn(20)
    run_in_ort(tmp_path / "dynamic.onnx", [longer], list(model(longer)))


def test_external_data_format(tmp_path, monkeypatch):
    # "Use external data format": mobilenet_v2 (random weights) with use_external_data_format.
    import torchvision

    monkeypatch.chdir(tmp_path)
    model = torchvision.models.mobilenet_v2(weights=None)
    model.eval()
    input = torch.randn(2, 3, 224, 224, requires_grad=True)
    torchonnx.export(model, (input, ), './large_model.onnx', use_external_data_format=True)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert "large_model.onnx" in files and len(files) > 1, files
    assert (tmp_path / "large_model.onnx").stat().st_size < 1_000_000  # weights outside
    with torch.no_grad():
        run_in_ort(tmp_path / "large_model.onnx", [input], [model(input)])


def test_elu(tmp_path):
    # "Adding support for an operator": torch.jit.trace(torch.nn.ELU(), torch.ones(1)) has
    # aten::elu, which exports as Elu.
    traced = torch.jit.trace(torch.nn.ELU(), torch.ones(1))
    x = torch.randn(2, 5)
    torchonnx.export(traced, x, tmp_path / "elu.onnx")
    assert OnnxModel(tmp_path / "elu.onnx").op_types == ["Elu"]
    run_in_ort(tmp_path / "elu.onnx", [x], [traced(x)])


def test_avoid_inplace_shape_model(tmp_path):
    # "Avoid in-place operations when using tensor.shape in tracing mode", rewritten as the
    # documentation advises (real_seq_length = real_seq_length + 2).
    class Model(torch.nn.Module):
        def forward(self, states):
            batch_size, seq_length = states.shape[:2]
            real_seq_length = seq_length
            real_seq_length = real_seq_length + 2
            return real_seq_length + seq_length

    states = torch.randn(2, 7, 3)
    torchonnx.export(Model(), states, tmp_path / "m.onnx", input_names=["states"],
                     dynamic_axes={"states": [0, 1]})
    run_in_ort(tmp_path / "m.onnx", [states], [torch.tensor(Model()(states))])
    other = torch.randn(3, 11, 3)
    run_in_ort(tmp_path / "m.onnx", [other], [torch.tensor(Model()(other))])


def test_reshape_by_tensor(tmp_path):
    # "Avoid NumPy and built-in Python types": x.reshape(y, -1) keeps y an input (y.item() would
    # be a constant).
    class Good(torch.nn.Module):
        def forward(self, x, y):
            return x.reshape(y, -1)

    x = torch.randn(4, 6)
    y = torch.tensor(2)
    torchonnx.export(Good(), (x, y), tmp_path / "good.onnx")
    run_in_ort(tmp_path / "good.onnx", [x, torch.tensor(8)], [x.reshape(8, -1)])


def test_unconvertible_ops_example():
    # "Discovering all unconvertible ATen ops at once".
    from torchonnx import utils as onnx_utils

    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.lgamma(x) + torch.digamma(x) + torch.relu(x)

    model, args, opset_version = Model(), (torch.rand(3) + 1,), 17
    torch_script_graph, unconvertible_ops = onnx_utils.unconvertible_ops(
        model, args, opset_version=opset_version)
    assert set(unconvertible_ops) == {"aten::lgamma", "aten::digamma"}
    assert isinstance(torch_script_graph, torch._C.Graph)


def test_indexing_patterns_torch_onnx_lists_as_unsupported(tmp_path):
    # "Unsupported Tensor Indexing Patterns" (the newer documentation): torchonnx exports them.
    # The documentation's `torch.tensor([1, 2], [2, -3])` is read as the 2-D index it means.
    class Read(torch.nn.Module):
        def forward(self, data):
            # Tensor indices that include negative values.
            return data[torch.tensor([[1, 2], [2, -3]]), torch.tensor([-2, 3])]

    class WriteNonConsecutive(torch.nn.Module):
        def forward(self, data, new_data):
            # Multiple tensor indices that are not consecutive.
            data[torch.tensor([2, 3]), :, torch.tensor([1, 2])] = new_data
            return data

    class WriteNegative(torch.nn.Module):
        def forward(self, data, new_data):
            # Tensor indices that include negative values.
            data[torch.tensor([1, -2]), torch.tensor([-2, 3])] = new_data
            return data

    class WriteBroadcast(torch.nn.Module):
        def forward(self, data, new_data):
            # Implicit broadcasting required for new_data.
            data[torch.tensor([[0, 2], [1, 1]]), 1:3] = new_data
            return data

    cases = [
        (Read(), (torch.randn(4, 5),)),
        (WriteNonConsecutive(), (torch.randn(4, 3, 5), torch.randn(2, 3))),
        (WriteNegative(), (torch.randn(4, 5), torch.randn(2))),
        (WriteBroadcast(), (torch.randn(3, 4, 5), torch.randn(5))),
    ]
    for model, args in cases:
        path = tmp_path / f"{type(model).__name__}.onnx"
        torchonnx.export(model, tuple(a.clone() for a in args), path, opset_version=11)
        run_in_ort(path, list(args), [model(*(a.clone() for a in args))])
