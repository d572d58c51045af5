#!/usr/bin/python3
"""The torch.onnx documentation's "Example: End-to-end AlexNet", as written there, through
torchonnx's Python package (``import torchonnx`` in place of ``torch.onnx``):

    PYTHONPATH=build/python /usr/bin/python3 examples/alexnet.py OUT_DIR

On the CPU with random weights (the documentation's ``pretrained=True`` downloads them and
``.cuda()`` needs a GPU). Writes OUT_DIR/alexnet_python.onnx and, for tools/verify/verify.mjs, the
example input and eager PyTorch's output as OUT_DIR/alexnet_python_test_data/{input,output}_0.pb.
"""

import os
import sys

import torch
import torchvision

import torchonnx

out = sys.argv[1] if len(sys.argv) > 1 else "."
torch.manual_seed(0)

dummy_input = torch.randn(10, 3, 224, 224)
model = torchvision.models.alexnet(weights=None)

# Providing input and output names sets the display names for values within the model's graph.
# Setting these does not change the semantics of the graph; it is only for readability.
#
# The inputs to the network consist of the flat list of inputs (i.e. the values you would pass
# to the forward() method) followed by the flat list of parameters. You can partially specify
# names, i.e. provide a list here shorter than the number of inputs to the model, and we will
# only set that subset of names, starting from the beginning.
input_names = ["actual_input_1"] + ["learned_%d" % i for i in range(16)]
output_names = ["output1"]

path = os.path.join(out, "alexnet_python.onnx")
torchonnx.export(model, dummy_input, path, verbose=True, input_names=input_names,
                 output_names=output_names)

model.eval()
with torch.no_grad():
    expected = model(dummy_input)
torchonnx._C.write_test_data(os.path.join(out, "alexnet_python_test_data"), [dummy_input],
                             [expected])
print(f"AlexNet (Python): exported to {path}")
