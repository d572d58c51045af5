"""torch.onnx.operators: tensor-shape helpers whose traces export as ONNX shape operations.

``shape_as_tensor(x)`` returns ``x``'s shape as a 1-D int64 tensor; traced, it is recorded as a
shape computation (ONNX ``Shape``) rather than as the example's numbers, so a model that reshapes
by it keeps working for other input shapes (with ``dynamic_axes``).
"""

import torch

__all__ = ["shape_as_tensor", "reshape_from_tensor_shape"]


def shape_as_tensor(x: torch.Tensor) -> torch.Tensor:
    """The shape of ``x`` as a 1-D int64 tensor (torch.onnx.operators.shape_as_tensor)."""
    return torch._shape_as_tensor(x)


def reshape_from_tensor_shape(x: torch.Tensor, shape: torch.Tensor) -> torch.Tensor:
    """``x`` reshaped to the shape held by the 1-D int64 tensor ``shape``."""
    return torch._reshape_from_tensor(x, shape)
