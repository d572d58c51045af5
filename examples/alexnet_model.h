// AlexNet written with the torch::nn C++ API, in torchvision's layout (so the parameter names
// match torchvision's state_dict: "features.0.weight", ...). Used by examples/alexnet.cpp and the
// tests.
#pragma once

#include <torch/torch.h>

struct AlexNetImpl : torch::nn::Module {
  AlexNetImpl(int64_t num_classes = 1000) {
    using namespace torch::nn;
    features = register_module(
        "features", Sequential(Conv2d(Conv2dOptions(3, 64, 11).stride(4).padding(2)), ReLU(),
                               MaxPool2d(MaxPool2dOptions(3).stride(2)),
                               Conv2d(Conv2dOptions(64, 192, 5).padding(2)), ReLU(),
                               MaxPool2d(MaxPool2dOptions(3).stride(2)),
                               Conv2d(Conv2dOptions(192, 384, 3).padding(1)), ReLU(),
                               Conv2d(Conv2dOptions(384, 256, 3).padding(1)), ReLU(),
                               Conv2d(Conv2dOptions(256, 256, 3).padding(1)), ReLU(),
                               MaxPool2d(MaxPool2dOptions(3).stride(2))));
    avgpool = register_module("avgpool", AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions({6, 6})));
    classifier = register_module(
        "classifier", Sequential(Dropout(0.5), Linear(256 * 6 * 6, 4096), ReLU(), Dropout(0.5),
                                 Linear(4096, 4096), ReLU(), Linear(4096, num_classes)));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = avgpool(features->forward(x));
    return classifier->forward(torch::flatten(x, 1));
  }

  torch::nn::Sequential features{nullptr}, classifier{nullptr};
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
};
TORCH_MODULE(AlexNet);
