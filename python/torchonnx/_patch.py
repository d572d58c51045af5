"""Routing a script's torch.onnx calls to torchonnx without editing it (issue 35 item 4):

    python3 -m torchonnx script.py [args...]      # runs script.py with torch.onnx patched
    python3 -m torchonnx -m package.module [args...]

    with torchonnx.patch_torch_onnx():            # or: patch = torchonnx.patch_torch_onnx()
        torch.onnx.export(model, x, "m.onnx")     #      ...; patch.undo()

While patched, torch.onnx.export, export_to_pretty_string, register_custom_op_symbolic,
unregister_custom_op_symbolic, utils.unconvertible_ops and the log functions (enable_log,
disable_log, is_onnx_log_enabled, set_log_stream) are torchonnx's. torch.onnx.is_in_onnx_export()
answers True during torchonnx's exports anyway, and torchonnx's errors are torch.onnx.errors'
classes, so `except torch.onnx.errors.CheckerError` keeps working.
"""

import threading

import torch.onnx
import torch.onnx.utils

_PATCHED_NAMES = (
    "export",
    "export_to_pretty_string",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
    "enable_log",
    "disable_log",
    "is_onnx_log_enabled",
    "set_log_stream",
)
_PATCHED_UTILS_NAMES = (
    "export",
    "export_to_pretty_string",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
    "unconvertible_ops",
)

_lock = threading.Lock()

# Registrations made both in torchonnx and in torch.onnx's own registry: the parts of torch.onnx
# the patch does not route (torch.onnx.verification.find_mismatch, utils._model_to_graph) convert
# with the same custom symbolics as the exports torchonnx makes.
_ALSO_TORCH_ONNX = ("register_custom_op_symbolic", "unregister_custom_op_symbolic")


def _also_torch_onnx(ours, torch_onnxs):
    def both(*args, **kwargs):
        ours(*args, **kwargs)
        try:
            torch_onnxs(*args, **kwargs)
        except Exception:  # torch.onnx refuses what torchonnx takes (an opset it lacks): ours only
            pass

    both.__name__ = ours.__name__
    both.__doc__ = ours.__doc__
    return both


class TorchOnnxPatch:
    """The patch of torch.onnx made by patch_torch_onnx(): undo() restores torch.onnx's own
    functions (also at the end of a with-block)."""

    def __init__(self):
        import torchonnx

        self._saved = []
        with _lock:
            for module, names in (
                (torch.onnx, _PATCHED_NAMES),
                (torch.onnx.utils, _PATCHED_UTILS_NAMES),
            ):
                for name in names:
                    if not hasattr(module, name):
                        continue
                    original = getattr(module, name)
                    self._saved.append((module, name, original))
                    replacement = getattr(torchonnx, name)
                    if name in _ALSO_TORCH_ONNX:
                        replacement = _also_torch_onnx(replacement, original)
                    setattr(module, name, replacement)

    def undo(self) -> None:
        with _lock:
            for module, name, original in reversed(self._saved):
                setattr(module, name, original)
            self._saved = []

    @property
    def active(self) -> bool:
        return bool(self._saved)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.undo()
        return False


def patch_torch_onnx() -> TorchOnnxPatch:
    """Makes torch.onnx's export functions torchonnx's until the returned patch's undo() (or the
    end of its with-block)."""
    return TorchOnnxPatch()

