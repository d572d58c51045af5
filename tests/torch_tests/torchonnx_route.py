"""A pytest plugin that routes torch.onnx's TorchScript export entry points to torchonnx for the
whole run (scripts/torch-tests.sh runs PyTorch's own ONNX tests with `-p torchonnx_route`).

torchonnx.patch_torch_onnx() replaces torch.onnx.export, export_to_pretty_string, the custom
symbolic registration, utils.unconvertible_ops and the log functions by torchonnx's; the
internal functions the tests also reach (torch.onnx.utils._export, the verification module's
export) are routed here to torchonnx.export with the arguments they share.
"""

import torch.onnx
import torch.onnx.utils

import torchonnx

_patch = None


def _export_internal(model, args, f, *a, **kw):
    # torch.onnx.utils._export(model, args, f, export_params, verbose, training, input_names,
    # output_names, operator_export_type, export_type, opset_version, do_constant_folding,
    # dynamic_axes, keep_initializers_as_inputs, fixed_batch_size, custom_opsets,
    # add_node_names, onnx_shape_inference, export_modules_as_functions, autograd_inlining)
    names = ["export_params", "verbose", "training", "input_names", "output_names",
             "operator_export_type", "export_type", "opset_version", "do_constant_folding",
             "dynamic_axes", "keep_initializers_as_inputs", "fixed_batch_size", "custom_opsets",
             "add_node_names", "onnx_shape_inference", "export_modules_as_functions",
             "autograd_inlining"]
    kw.update(zip(names, a))
    for dropped in ("export_type", "fixed_batch_size", "add_node_names", "onnx_shape_inference",
                    "autograd_inlining"):
        kw.pop(dropped, None)
    torchonnx.export(model, args, f, **kw)
    return None


def pytest_configure(config):
    global _patch
    _patch = torchonnx.patch_torch_onnx()
    torch.onnx.utils._export = _export_internal


def pytest_unconfigure(config):
    if _patch is not None:
        _patch.undo()
