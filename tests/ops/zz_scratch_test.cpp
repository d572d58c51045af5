#include "ops/op_test_util.h"
#include <iostream>
namespace torchonnx::testing {
namespace {
void show(const char* name, const TracedFunction& fn, const Inputs& in, bool fold = true) {
  try {
    std::cout << name << ": " << join(converted_ops(frontend::capture_trace(fn, in, {}), fold)) << "\n";
  } catch (const std::exception& e) { std::cout << name << ": ERROR " << std::string(e.what()).substr(0, 200) << "\n"; }
}
void shows(const char* name, const std::string& src, const Inputs& in, bool fold = true) {
  try {
    std::cout << name << ": " << join(converted_ops(frontend::capture_module(script_module(src), in), fold)) << "\n";
  } catch (const std::exception& e) { std::cout << name << ": ERROR " << std::string(e.what()).substr(0, 300) << "\n"; }
}
c10::IValue tup(std::vector<at::Tensor> v) { std::vector<c10::IValue> iv(v.begin(), v.end()); return c10::ivalue::Tuple::create(iv); }
TEST(Scratch, Show) {
  auto x3 = at::randn({2, 3, 8});
  auto x4 = at::randn({2, 3, 8, 8});
  auto x5 = at::randn({1, 2, 4, 4, 4});
  show("max_pool1d", [](const Inputs& in) { return at::max_pool1d(arg(in, 0), {2}); }, {x3});
  show("max_pool3d", [](const Inputs& in) { return at::max_pool3d(arg(in, 0), {2}); }, {x5});
  show("avg_pool1d", [](const Inputs& in) { return at::avg_pool1d(arg(in, 0), {2}); }, {x3});
  show("avg_pool3d", [](const Inputs& in) { return at::avg_pool3d(arg(in, 0), {2}); }, {x5});
  show("aap1", [](const Inputs& in) { return at::adaptive_avg_pool1d(arg(in, 0), {4}); }, {x3});
  show("aap3", [](const Inputs& in) { return at::adaptive_avg_pool3d(arg(in, 0), {2,2,2}); }, {x5});
  show("amp1", [](const Inputs& in) { return std::get<0>(at::adaptive_max_pool1d(arg(in, 0), {4})); }, {x3});
  show("amp3", [](const Inputs& in) { return std::get<0>(at::adaptive_max_pool3d(arg(in, 0), {2,2,2})); }, {x5});
  show("split sizes", [](const Inputs& in) { return tup(at::split(arg(in, 0), {3, 5}, 2)); }, {x3});
  show("split_with_sizes", [](const Inputs& in) { return tup(at::split_with_sizes(arg(in, 0), {3, 5}, -1)); }, {x3});
  show("reshape", [](const Inputs& in) { return arg(in, 0).reshape({-1, 8}); }, {x3});
  show("view_as", [](const Inputs& in) { return arg(in, 0).view_as(arg(in,1)); }, {x3, at::randn({6, 8})});
  show("reshape_as", [](const Inputs& in) { return arg(in, 0).reshape_as(arg(in,1)); }, {x3, at::randn({6, 8})});
  show("expand", [](const Inputs& in) { return arg(in, 0).expand({2, -1, 4}); }, {at::randn({3, 1})});
  show("select", [](const Inputs& in) { return arg(in, 0).select(1, -1); }, {x3});
  show("slice", [](const Inputs& in) { return arg(in, 0).slice(2, 1, -1, 2); }, {x3});
  show("index", [](const Inputs& in) { return arg(in, 0).index({at::indexing::Slice(), 0}); }, {x3});
  show("squeeze dim", [](const Inputs& in) { return arg(in, 0).squeeze(1); }, {x3});
  show("flatten0d", [](const Inputs& in) { return arg(in, 0).flatten(); }, {at::randn({})});
  show("to double", [](const Inputs& in) { return arg(in, 0).to(at::kDouble); }, {x3});
  show("to other", [](const Inputs& in) { return arg(in, 0).to(arg(in,1)); }, {x3, at::ones({1}, at::kLong)});
  show("to same", [](const Inputs& in) { return arg(in, 0).to(at::kFloat); }, {x3});
  show("rsub tensor", [](const Inputs& in) { return at::rsub(arg(in, 0), arg(in,1), 2); }, {x3, x3});
  show("relu_", [](const Inputs& in) { return arg(in, 0).clone().relu_(); }, {x3});
  show("sum bool", [](const Inputs& in) { return arg(in, 0).sum(); }, {x3 > 0});
  show("true_divide", [](const Inputs& in) { return at::true_divide(arg(in, 0), arg(in,1)); }, {x3, x3});
  show("unsqueeze", [](const Inputs& in) { return arg(in, 0).unsqueeze(-1); }, {x3});
  show("softmax dtype", [](const Inputs& in) { return at::softmax(arg(in, 0), 1, at::kDouble); }, {x3});
  show("conv1d", [](const Inputs& in) { return at::conv1d(arg(in, 0), at::ones({4,3,3})); }, {x3});
  show("conv1d same", [](const Inputs& in) { return at::conv1d(arg(in, 0), at::ones({4,3,3}), {}, 1, "valid"); }, {x3});
  show("tuple out", [](const Inputs& in) { return c10::ivalue::Tuple::create({arg(in,0), c10::ivalue::Tuple::create({arg(in,0)+1})}); }, {x3});
  show("hardtanh_", [](const Inputs& in) { return [&]{ auto t = arg(in,0).clone(); return at::hardtanh_(t); }(); }, {x3});
  show("sigmoid", [](const Inputs& in) { return at::sigmoid(arg(in,0)); }, {x3});
  show("silu", [](const Inputs& in) { return at::silu(arg(in,0)); }, {x3});
  show("hardsigmoid", [](const Inputs& in) { return at::hardsigmoid(arg(in,0)); }, {x3});
  show("leaky", [](const Inputs& in) { return at::leaky_relu(arg(in,0), 0.2); }, {x3});
  show("logsm", [](const Inputs& in) { return at::log_softmax(arg(in,0), 0); }, {x3});
  show("mean dim", [](const Inputs& in) { return at::mean(arg(in,0), {-1}, true); }, {x3});
  show("mean empty dims", [](const Inputs& in) { return at::mean(arg(in,0), at::IntArrayRef{}); }, {x3});
  show("sizeview unf", [](const Inputs& in) { return arg(in,0).view({arg(in,0).size(0), -1}); }, {x3}, false);
  shows("script size", "def forward(self, x):\n  return x.view(x.size(0), -1)\n", {x3}, false);
  shows("script size folded", "def forward(self, x):\n  return x.view(x.size(0), -1)\n", {x3}, true);
  shows("script conv2d", "def forward(self, x, w):\n  return torch.conv2d(x, w, None, [1], [1], [1], 1)\n", {x4, at::randn({4,3,3,3})});
  shows("script conv2d same", "def forward(self, x, w):\n  return torch.conv2d(x, w, None, [1], 'same', [1], 1)\n", {x4, at::randn({4,3,3,3})});
  shows("script convolution", "def forward(self, x, w):\n  return torch.convolution(x, w, None, [1], [1], [1], False, [0], 1)\n", {x4, at::randn({4,3,3,3})});
  shows("script true_divide", "def forward(self, x, y):\n  return torch.true_divide(x, y)\n", {x3, x3});
  shows("script dim", "def forward(self, x):\n  return x * x.dim()\n", {x3}, false);
  shows("script numel", "def forward(self, x):\n  return x * x.numel()\n", {x3}, false);
  shows("script getitem", "def forward(self, x):\n  s = x.size()\n  return x.view(s[0], -1)\n", {x3}, false);
  shows("script getitem tensors", "def forward(self, x):\n  s = torch.split(x, 2, 2)\n  return s[1]\n", {x3}, false);
  shows("script unpack", "def forward(self, x):\n  a, b, c = x.size()\n  return x.view(a, b * c)\n", {x3}, false);
  shows("script numtotensor", "def forward(self, x):\n  return x * torch.ops.prim.NumToTensor(x.size(0))\n", {x3}, false);
  shows("script Int", "def forward(self, x):\n  return x.view(int(x.sum() > 0) + 1, -1)\n", {x3}, false);
  shows("script Float", "def forward(self, x):\n  return x * float(x.sum())\n", {x3}, false);
  shows("script Bool", "def forward(self, x):\n  return x * bool(x.sum())\n", {x3}, false);
  shows("script IntImplicit", "def forward(self, x, i):\n  return x.select(0, i)\n", {x3, at::scalar_tensor(1, at::kLong)}, false);
  shows("script tuple", "def forward(self, x):\n  t = (x, x + 1)\n  return t\n", {x3}, false);
}
}  // namespace
}  // namespace torchonnx::testing
