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


def _onednn_disagrees():
    """Whether libtorch's oneDNN kernels give other results than its reference ones on this
    machine. Seen with Debian 13's libtorch 2.6 (libdnnl3.6 3.7.2) on an AMD EPYC CPU: under
    no_grad, nn.LSTM and nn.ConvTranspose2d differ from the same modules with oneDNN off (and from
    ONNX Runtime) by ~0.1. The tests compute their references under no_grad: with such a kernel,
    they would hold the exports to wrong numbers (Note [References without oneDNN] in
    src/frontend/reference_guard.h)."""
    torch.manual_seed(0)
    lstm, deconv = torch.nn.LSTM(4, 6).eval(), torch.nn.ConvTranspose2d(3, 4, 3, stride=2).eval()
    x, image = torch.randn(5, 3, 4), torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        fast = (lstm(x)[0], deconv(image))
        with torch.backends.mkldnn.flags(enabled=False):
            reference = (lstm(x)[0], deconv(image))
    return any(not torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(fast, reference))


def pytest_configure(config):
    global _patch
    _patch = torchonnx.patch_torch_onnx()
    torch.onnx.utils._export = _export_internal
    if torch.backends.mkldnn.is_available() and _onednn_disagrees():
        torch.backends.mkldnn.enabled = False
        print("torchonnx_route: libtorch's oneDNN LSTM/ConvTranspose differ from its reference "
              "kernels on this machine; the run computes PyTorch's results with oneDNN off")


def pytest_unconfigure(config):
    if _patch is not None:
        _patch.undo()
