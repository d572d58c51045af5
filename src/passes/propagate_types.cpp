// Note [Type propagation on meta tensors]
// torch.onnx learns types and shapes by running the model (tracing) or by its own ONNX shape
// inference. We learn them without arithmetic: each node runs on meta tensors (shape and dtype
// only), with a few ops rerouted where libtorch 1.13 lacks a meta kernel. Values that depend only
// on constants and on static shapes (x.size(0), int arithmetic, NumToTensor, shape lists) are
// computed for real: they are "concrete" and, when folding is on, replaced by constants — the
// equivalent of torch.onnx's constant folding of Shape/Gather chains. Dynamic axes must keep such
// values symbolic; that is decided before this pass by which inputs are marked dynamic.
#include <ATen/ATen.h>
#include <ATen/InferSize.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <functional>
#include <iostream>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "common/jit_util.h"
#include "passes/passes.h"

namespace torchonnx::passes {

using torch::jit::Node;
using torch::jit::Value;

namespace {

// A set of op kinds, interned once: per-node lookups hash a Symbol instead of building and hashing
// the qualified name's std::string.
using SymbolSet = std::unordered_set<c10::Symbol>;

SymbolSet symbols(std::initializer_list<const char*> names) {
  SymbolSet set;
  for (const char* name : names) set.insert(c10::Symbol::fromQualString(name));
  return set;
}

c10::IValue to_meta(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    // Quantized tensors have no meta form: they stay real (computed on zeros, see
    // Note [Zeros fallback]), so quantized kernels keep running on them.
    if (!t.defined() || t.is_meta() || t.is_quantized()) return v;
    return at::empty(t.sizes(), t.options().device(at::kMeta));
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor& t : v.toTensorList()) list.push_back(to_meta(t).toTensor());
    return list;
  }
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    for (const c10::IValue& e : list) out.push_back(to_meta(e));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const auto& e : v.toTupleRef().elements()) elems.push_back(to_meta(e));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  return v;
}

// Note [Shapes as tensors]: _shape_as_tensor(x) (torch.onnx.operators.shape_as_tensor, used by
// torchvision's detection transforms when tracing) is x's sizes as an int64 tensor: known
// whenever x's sizes are, as x.size(i) is. Its result is a real tensor even for a meta input, so
// the arithmetic on it (min, max, floor, int()) is computed, and folded unless it varies with
// the dynamic axes (then its converters compute it in the graph).
bool is_shape_tensor(const Node* node) {
  static const SymbolSet kOps = symbols({"aten::_shape_as_tensor", "prim::shape"});
  return kOps.count(node->kind()) > 0 && node->outputs().size() == 1;
}

bool holds_tensor(const c10::IValue& v) {
  if (v.isTensor()) return true;
  if (v.isTensorList()) return true;
  if (v.isList()) {
    for (const auto& e : v.toList()) {
      if (holds_tensor(e)) return true;
    }
  }
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) {
      if (holds_tensor(e)) return true;
    }
  }
  return false;
}

std::vector<int64_t> conv_output_size(at::IntArrayRef input, at::IntArrayRef weight,
                                      std::vector<int64_t> stride, std::vector<int64_t> padding,
                                      std::vector<int64_t> dilation, bool transposed,
                                      std::vector<int64_t> output_padding, int64_t groups) {
  const size_t n = input.size() - 2;
  auto at_i = [](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
    return v.empty() ? fallback : v[v.size() == 1 ? 0 : i];
  };
  std::vector<int64_t> out{input[0], transposed ? weight[1] * groups : weight[0]};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = input[i + 2], k = weight[i + 2];
    int64_t s = at_i(stride, i, 1), p = at_i(padding, i, 0), d = at_i(dilation, i, 1);
    out.push_back(transposed ? (in - 1) * s - 2 * p + d * (k - 1) + at_i(output_padding, i, 0) + 1
                             : (in + 2 * p - d * (k - 1) - 1) / s + 1);
  }
  return out;
}

// Runs `node` on `stack`. List and tuple plumbing has no registered operator (the interpreter
// implements it inline), and some ops lack a meta kernel in libtorch 1.13: both are done here.
void run_node(Node* node, torch::jit::Stack& stack) {
  switch (node->kind()) {
    case c10::prim::ListConstruct: {
      c10::impl::GenericList list(
          node->output()->type()->expectRef<c10::ListType>().getElementType());
      for (auto& v : stack) list.push_back(std::move(v));
      stack.assign(1, c10::IValue(std::move(list)));
      return;
    }
    case c10::prim::TupleConstruct: {
      auto tuple = c10::ivalue::Tuple::create(std::vector<c10::IValue>(stack.begin(), stack.end()));
      stack.assign(1, c10::IValue(std::move(tuple)));
      return;
    }
    case c10::prim::ListUnpack: {
      auto list = stack.at(0).toListRef();
      stack.assign(list.begin(), list.end());
      return;
    }
    case c10::prim::unchecked_cast:
      // Optional[T] → T (after `if x is not None`): the value itself.
      return;
    case c10::prim::TupleUnpack: {
      auto elems = stack.at(0).toTupleRef().elements();
      stack.assign(elems.begin(), elems.end());
      return;
    }
    default:
      break;
  }
  if (is_shape_tensor(node) && stack.size() == 1 && stack[0].isTensor() &&
      stack[0].toTensor().defined()) {
    stack.assign(1, c10::IValue(at::tensor(stack[0].toTensor().sizes().vec(), at::kLong)));
    return;
  }
  switch (node->kind()) {
    case c10::prim::device:
      // Values are propagated on meta tensors, but the model runs on the CPU.
      stack.assign(1, c10::IValue(c10::Device(c10::kCPU)));
      return;
    default:
      break;
  }
  static const auto kConvolutions =
      std::unordered_set<c10::Symbol>{c10::Symbol::fromQualString("aten::_convolution"),
                                      c10::Symbol::fromQualString("aten::convolution")};
  if (kConvolutions.count(node->kind()) && stack.at(0).toTensor().is_meta()) {
    // libtorch's C++ convolution has no meta kernel (Python registers one): shape rule here.
    const at::Tensor& x = stack[0].toTensor();
    const at::Tensor& w = stack[1].toTensor();
    const auto stride = stack[3].toIntVector(), padding = stack[4].toIntVector();
    const auto dilation = stack[5].toIntVector(), output_padding = stack[7].toIntVector();
    const bool transposed = stack[6].toBool();
    const int64_t groups = stack[8].toInt();
    // The rule computes sizes without libtorch's checks: arguments it would refuse (an input of
    // another rank, channels that do not match, a kernel larger than the padded input) go to the
    // zeros fallback, where libtorch's kernel gives its own error.
    const auto spatial = static_cast<size_t>(w.dim()) - 2;
    bool fits = x.dim() == w.dim() && w.dim() >= 3 && groups > 0 && stride.size() == spatial &&
                padding.size() == spatial && dilation.size() == spatial &&
                (!transposed || output_padding.size() == spatial) &&
                x.size(1) == (transposed ? w.size(0) : w.size(1) * groups) &&
                (transposed || w.size(0) % groups == 0);
    for (size_t i = 0; fits && i < spatial; ++i) {
      fits =
          stride[i] > 0 && dilation[i] > 0 && padding[i] >= 0 &&
          (transposed || x.size(2 + i) + 2 * padding[i] >= dilation[i] * (w.size(2 + i) - 1) + 1);
    }
    if (!fits) {
      throw std::invalid_argument("convolution: the input, weight and arguments do not fit");
    }
    stack.assign(
        1, c10::IValue(at::empty(conv_output_size(x.sizes(), w.sizes(), stride, padding, dilation,
                                                  transposed, output_padding, groups),
                                 x.options())));
    return;
  }
  node->getOperation()(stack);
}

// Shape rules for common ops without a meta kernel (Note [Ops without a meta kernel]): replaces
// the inputs on `stack` by meta outputs; false when `node` has none or its inputs do not fit.
// Each gives the output libtorch's CPU kernel gives: same dtype, sizes from the inputs' sizes.
bool apply_shape_rule(Node* node, torch::jit::Stack& stack) {
  static const c10::Symbol kBatchNorm = c10::Symbol::fromQualString("aten::batch_norm");
  static const c10::Symbol kLayerNorm = c10::Symbol::fromQualString("aten::layer_norm");
  static const c10::Symbol kGroupNorm = c10::Symbol::fromQualString("aten::group_norm");
  static const c10::Symbol kInstanceNorm = c10::Symbol::fromQualString("aten::instance_norm");
  static const c10::Symbol kRelu = c10::Symbol::fromQualString("aten::relu");
  // libtorch 2.x's C++ has no meta kernel for these two (Python registers them): each miss costs
  // an exception and a run on zeros (mobilenet_v3's every block).
  static const c10::Symbol kHardswish = c10::Symbol::fromQualString("aten::hardswish");
  static const c10::Symbol kHardtanh = c10::Symbol::fromQualString("aten::hardtanh");
  static const c10::Symbol kEmbedding = c10::Symbol::fromQualString("aten::embedding");
  static const c10::Symbol kView = c10::Symbol::fromQualString("aten::view");
  const c10::Symbol kind = node->kind();
  if (kind == kView) {
    // RemoveEvalNoOps drops contiguous(), so view(x.transpose(1, 2).contiguous(), ...) reaches
    // here on a non-contiguous meta tensor, where view throws (a c10::Error, costly): the zeros
    // fallback would view a contiguous copy. Same sizes, without the error.
    if (stack.size() != 2 || !stack[0].isTensor() || !stack[1].isIntList()) return false;
    const at::Tensor& self = stack[0].toTensor();
    if (!self.defined() || !self.is_meta() || self.is_contiguous()) return false;
    const std::vector<int64_t> sizes = at::infer_size(stack[1].toIntVector(), self.numel());
    stack.assign(1, c10::IValue(at::empty(sizes, self.options())));
    return true;
  }
  static const c10::Symbol kRoiAlign = c10::Symbol::fromQualString("torchvision::roi_align");
  static const c10::Symbol kRoiPool = c10::Symbol::fromQualString("torchvision::roi_pool");
  if (kind == kRoiAlign || kind == kRoiPool) {
    // roi_align/roi_pool(input N x C x H x W, rois K x 5, spatial_scale, pooled_height,
    // pooled_width, ...): K x C x pooled_height x pooled_width (roi_pool: and its int64 argmax).
    if (stack.size() < 5 || !stack[0].isTensor() || !stack[1].isTensor() || !stack[3].isInt() ||
        !stack[4].isInt()) {
      return false;
    }
    const at::Tensor &input = stack[0].toTensor(), &rois = stack[1].toTensor();
    if (!input.defined() || !rois.defined() || !input.is_meta() || input.dim() != 4 ||
        rois.dim() != 2) {
      return false;
    }
    const std::vector<int64_t> sizes{rois.size(0), input.size(1), stack[3].toInt(),
                                     stack[4].toInt()};
    at::Tensor out = at::empty(sizes, input.options());
    if (kind == kRoiAlign) {
      stack.assign(1, c10::IValue(out));
    } else {
      stack.assign(
          {c10::IValue(out), c10::IValue(at::empty(sizes, out.options().dtype(at::kLong)))});
    }
    return true;
  }
  static const c10::Symbol kSdpa =
      c10::Symbol::fromQualString("aten::scaled_dot_product_attention");
  if (kind == kSdpa) {
    // scaled_dot_product_attention(query (..., L, E), key, value (..., S, Ev), ...): (..., L, Ev)
    // in the query's dtype. libtorch 2.x's C++ has no meta kernel for it (Python registers one),
    // and its zeros run costs an attention.
    if (stack.size() < 3 || !stack[0].isTensor() || !stack[2].isTensor()) return false;
    const at::Tensor &q = stack[0].toTensor(), &v = stack[2].toTensor();
    if (!q.defined() || !v.defined() || q.dim() < 2 || v.dim() < 2) return false;
    std::vector<int64_t> sizes = q.sizes().vec();
    sizes.back() = v.size(-1);
    stack.assign(1, c10::IValue(at::empty(sizes, q.options().device(at::kMeta))));
    return true;
  }
  if (kind != kBatchNorm && kind != kLayerNorm && kind != kGroupNorm && kind != kInstanceNorm &&
      kind != kRelu && kind != kEmbedding && kind != kHardswish && kind != kHardtanh) {
    return false;
  }
  if (stack.empty() || !stack[0].isTensor() || node->outputs().size() != 1) return false;
  const at::Tensor& first = stack[0].toTensor();
  if (!first.defined() || !first.is_meta()) return false;
  if (kind == kEmbedding) {
    // embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): a row per index.
    if (stack.size() != 5 || !stack[1].isTensor() || first.dim() != 2) return false;
    const at::Tensor& indices = stack[1].toTensor();
    if (!indices.defined() || !indices.is_meta() ||
        !(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt)) {
      return false;
    }
    std::vector<int64_t> sizes = indices.sizes().vec();
    sizes.push_back(first.size(1));
    stack.assign(1, c10::IValue(at::empty(sizes, first.options())));
    return true;
  }
  // Normalizations, relu, hardswish, hardtanh: the input's sizes and dtype (contiguous, as their
  // kernels give them).
  if (!at::isFloatingType(first.scalar_type()) && kind != kRelu) return false;
  if (kind == kRelu && (stack.size() != 1 || first.scalar_type() == at::kBool)) return false;
  stack.assign(1, c10::IValue(at::empty(first.sizes(), first.options())));
  return true;
}

// Note [Placeholders that disagree]: placeholders of data-dependent sizes come from different
// places (an int read from data is 1, a tensor of rows kept by nms has its own count), so an op
// that checks sizes against each other can fail on them where the model never does:
// split_with_sizes(x, [n]) with n not x.size(0), cat of pieces whose other dims disagree. Their
// results only need dtype and rank (they are approximate): one piece per size, of x's sizes with
// the split dim set to that size; the first piece's sizes with the cat dim summed.
bool split_placeholders(const Node* node, const torch::jit::Stack& inputs,
                        torch::jit::Stack& outputs) {
  static const c10::Symbol kCat = c10::Symbol::fromQualString("aten::cat");
  if (node->kind() == kCat && inputs.size() == 2 && inputs[0].isTensorList() && inputs[1].isInt()) {
    // cat of pieces whose other dims disagree: the first piece's sizes, the dim summed.
    auto pieces = inputs[0].toTensorList();
    if (pieces.empty()) return false;
    const at::Tensor first = pieces.get(0);
    if (!first.defined() || first.dim() == 0) return false;
    const int64_t dim = at::maybe_wrap_dim(inputs[1].toInt(), first.dim());
    std::vector<int64_t> sizes = first.sizes().vec();
    sizes[dim] = 0;
    for (const at::Tensor& t : pieces) {
      if (!t.defined() || t.dim() != first.dim()) return false;
      sizes[dim] += t.size(dim);
    }
    outputs.assign(1, c10::IValue(at::empty(sizes, first.options().device(at::kMeta))));
    return true;
  }
  static const SymbolSet kSplits = symbols({"aten::split_with_sizes", "aten::split"});
  if (!kSplits.count(node->kind()) || inputs.size() != 3 || !inputs[0].isTensor() ||
      !inputs[1].isIntList() || !inputs[2].isInt()) {
    return false;
  }
  const at::Tensor& x = inputs[0].toTensor();
  if (!x.defined() || x.dim() == 0) return false;
  const int64_t dim = at::maybe_wrap_dim(inputs[2].toInt(), x.dim());
  c10::List<at::Tensor> pieces;
  for (int64_t size : inputs[1].toIntVector()) {
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes[dim] = std::max<int64_t>(size, 0);
    pieces.push_back(at::empty(sizes, x.options().device(at::kMeta)));
  }
  outputs.assign(1, c10::IValue(pieces));
  return true;
}

// Ops that read only the rank, dtype or device of their tensor input: exact on approximate
// values (Note [Approximate values]), so that `if x.dim() == 4` in scripted helpers still folds.
bool reads_rank_or_dtype(const Node* node) {
  static const SymbolSet kOps =
      symbols({"aten::dim", "prim::dtype", "prim::device", "aten::is_floating_point",
               "aten::is_complex", "prim::layout", "prim::is_cuda", "aten::get_device"});
  return kOps.count(node->kind()) > 0;
}

// Ops whose output shape depends on tensor values: running them on zeros would give a wrong shape.
bool is_data_dependent(const Node* node) {
  static const SymbolSet kOps = symbols({"aten::nonzero",
                                         "aten::nonzero_numpy",
                                         "aten::unique",
                                         "aten::_unique",
                                         "aten::_unique2",
                                         "aten::unique_consecutive",
                                         "aten::unique_dim",
                                         "aten::masked_select",
                                         "aten::repeat_interleave",
                                         "aten::item",
                                         "aten::Int",
                                         "aten::Float",
                                         "aten::Bool",
                                         "aten::ScalarImplicit",
                                         "aten::IntImplicit",
                                         "aten::FloatImplicit",
                                         "prim::tolist",
                                         "aten::_local_scalar_dense",
                                         "aten::bincount",
                                         "aten::histc",
                                         "torchvision::nms"});
  if (kOps.count(node->kind())) return true;
  // where(condition) is nonzero(condition) as a tuple; x[mask] selects by a bool/uint8 mask.
  static const c10::Symbol kWhere = c10::Symbol::fromQualString("aten::where");
  static const c10::Symbol kIndex = c10::Symbol::fromQualString("aten::index");
  if (node->kind() == kWhere) return node->inputs().size() == 1;
  if (node->kind() == kIndex && node->inputs().size() == 2) {
    const Node* list = node->input(1)->node();
    if (list->kind() != c10::prim::ListConstruct) return true;  // unknown indices: be safe
    for (const Value* index : list->inputs()) {
      auto type = index->type()->cast<c10::TensorType>();
      if (!type) continue;  // None
      auto dtype = type->scalarType();
      if (!dtype || *dtype == at::kBool || *dtype == at::kByte) return true;
    }
  }
  return false;
}

int64_t tensor_elements(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() ? v.toTensor().numel() : 0;
  int64_t n = 0;
  if (v.isList()) {
    for (const auto& e : v.toListRef()) n += tensor_elements(e);
  }
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) n += tensor_elements(e);
  }
  return n;
}

// Note [Zeros fallback]: libtorch 1.13 registers many meta kernels only from Python
// (torch/_meta_registrations.py), so in C++ ops such as native_batch_norm or
// _adaptive_avg_pool2d have none. Those run once on zero-filled CPU tensors instead: cheap for
// the elementwise/normalization/pooling ops concerned (convolution, the costly one, has a shape
// rule above), and exact for shapes because these ops' shapes do not depend on values.
bool small_enough(const torch::jit::Stack& stack) {
  constexpr int64_t kMaxElements = int64_t{1} << 26;
  int64_t total = 0;
  for (const auto& v : stack) total += tensor_elements(v);
  return total <= kMaxElements;
}

bool can_run_on_zeros(const Node* node, const torch::jit::Stack& stack) {
  if (is_data_dependent(node) || node->isNondeterministic()) return false;
  return small_enough(stack);
}

// embedding_bag with include_last_offset reads offsets[-1] as the number of indices: all-zero
// offsets make libtorch's CPU kernel write out of bounds, so the last one is set right.
void fix_zero_offsets(const Node* node, torch::jit::Stack& stack) {
  static const SymbolSet kBags =
      symbols({"aten::embedding_bag", "aten::_embedding_bag", "aten::_embedding_bag_forward_only"});
  if (!kBags.count(node->kind()) || stack.size() < 8) return;
  if (!stack[7].isBool() || !stack[7].toBool() || !stack[2].isTensor()) return;
  at::Tensor offsets = stack[2].toTensor().clone();
  if (offsets.numel() == 0 || !stack[1].isTensor()) return;
  offsets.view(-1)[-1] = stack[1].toTensor().numel();
  stack[2] = offsets;
}

// `ones`: bool and floating tensors are filled with ones instead (integers, which may be indices,
// stay zeros). Data-dependent ops (nonzero, x[mask], nms) then give results of the largest sizes
// rather than empty ones, so that ops after them (topk(x, k), x.view(n, 4)) still run on the
// placeholders (Note [Approximate values]).
// `all_ones`: every tensor is filled with ones (divisors: integer division by zero throws).
c10::IValue meta_to_zeros(const c10::IValue& v, bool ones = false, bool all_ones = false) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || !t.is_meta()) return v;
    if (all_ones ||
        (ones && (t.scalar_type() == at::kBool || at::isFloatingType(t.scalar_type())))) {
      return at::ones(t.sizes(), t.options().device(at::kCPU));
    }
    return at::zeros(t.sizes(), t.options().device(at::kCPU));
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor& t : v.toTensorList()) list.push_back(meta_to_zeros(t, ones).toTensor());
    return list;
  }
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    for (const c10::IValue& e : list) out.push_back(meta_to_zeros(e, ones));
    return out;
  }
  return v;
}

// A list value of its own: list ops on meta values mutate the list they are given, and values
// that flow into a loop or branch must not change the list outside it.
c10::IValue copy_list(const c10::IValue& v) {
  return v.isList() ? c10::IValue(v.toList().copy()) : v;
}

bool is_foldable(const c10::IValue& v) {
  if (v.isInt() || v.isDouble() || v.isBool() || v.isIntList() || v.isDoubleList() ||
      v.isBoolList() || v.isString() || v.isDevice())
    return true;
  if (v.isTensor()) return v.toTensor().defined() && !v.toTensor().requires_grad();
  return false;
}

// Note [Ops without a meta kernel]
// libtorch 1.13's C++ library lacks meta kernels for many ops (relu, native_batch_norm,
// native_layer_norm, ...: Python registers them). Such an op throws c10::NotImplementedError on
// meta tensors, and building that error is costly (c10::Error captures a symbolized backtrace,
// milliseconds each). The ops seen failing so are remembered for the whole process, so that each
// throws at most once; later nodes of that op go to the zeros fallback directly. The most common
// ones have a shape rule instead (apply_shape_rule) and never run at all.
class OpsWithoutMetaKernel {
 public:
  bool contains(const c10::OperatorName& op) {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return ops_.count(op) > 0;
  }
  void insert(const c10::OperatorName& op) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    ops_.insert(op);
  }

 private:
  std::shared_mutex mutex_;
  std::unordered_set<c10::OperatorName> ops_;
};

OpsWithoutMetaKernel& ops_without_meta_kernel() {
  static auto* ops = new OpsWithoutMetaKernel();  // never destroyed: used until exit
  return *ops;
}

bool lacks_meta_kernel(const Node* node) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  return schema && ops_without_meta_kernel().contains(schema->operator_name());
}

void remember_lacks_meta_kernel(const Node* node) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (!schema) return;
  if (std::getenv("TORCHONNX_DEBUG_TYPES")) {
    std::cerr << "type propagation: no meta kernel for " << schema->operator_name()
              << ": zeros from now on\n";
  }
  ops_without_meta_kernel().insert(schema->operator_name());
}

bool holds_meta_tensor(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() && v.toTensor().is_meta();
  if (v.isList()) {
    for (const auto& e : v.toListRef()) {
      if (holds_meta_tensor(e)) return true;
    }
  }
  return false;
}

bool on_meta(const torch::jit::Stack& inputs) {
  for (const auto& v : inputs) {
    if (holds_meta_tensor(v)) return true;
  }
  return false;
}

// Whether two results of a node agree (numbers and lists by value, tensors by sizes).
bool same_value(const c10::IValue& a, const c10::IValue& b) {
  if (a.tagKind() != b.tagKind()) return false;
  if (a.isTensor()) {
    const at::Tensor &x = a.toTensor(), &y = b.toTensor();
    return x.defined() == y.defined() && (!x.defined() || x.sizes() == y.sizes());
  }
  if (a.isList()) {
    auto x = a.toListRef(), y = b.toListRef();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!same_value(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isTuple()) {
    const auto &x = a.toTupleRef().elements(), &y = b.toTupleRef().elements();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!same_value(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isInt()) return a.toInt() == b.toInt();
  if (a.isDouble()) return a.toDouble() == b.toDouble();
  if (a.isBool()) return a.toBool() == b.toBool();
  if (a.isString()) return a.toStringRef() == b.toStringRef();
  return true;  // None, devices, dtypes: not shapes
}

// Note [Dense value maps]
// Facts about values are kept in slots indexed by Value::unique() (dense within a graph), not in
// hash maps keyed by pointer: at 100k nodes the hash maps' scattered buckets made each lookup a
// cache miss and the pass grow faster than the graph. A slot remembers its Value*, so find()
// works as a map's does. Slots live in a deque: growing it (values made by folding or by inlining
// a branch) keeps references to other slots valid, as an unordered_map's are.
class ValueMap {
 public:
  using Entry = std::pair<Value*, c10::IValue>;

  Entry* find(const Value* v) {
    const size_t i = v->unique();
    return i < slots_.size() && slots_[i].first == v ? &slots_[i] : nullptr;
  }
  const Entry* find(const Value* v) const {
    const size_t i = v->unique();
    return i < slots_.size() && slots_[i].first == v ? &slots_[i] : nullptr;
  }
  std::nullptr_t end() const { return nullptr; }
  size_t count(const Value* v) const { return find(v) != nullptr ? 1 : 0; }
  bool empty() const { return size_ == 0; }
  c10::IValue& at(const Value* v) {
    Entry* e = find(v);
    if (e == nullptr) throw std::out_of_range("type propagation: no value for %" + v->debugName());
    return e->second;
  }
  c10::IValue& operator[](Value* v) {
    const size_t i = v->unique();
    if (i >= slots_.size()) slots_.resize(i + 1 + i / 4);
    Entry& e = slots_[i];
    if (e.first != v) {
      e.first = v;
      e.second = c10::IValue();
      ++size_;
    }
    return e.second;
  }
  void erase(const Value* v) {
    if (Entry* e = find(v)) {
      e->first = nullptr;
      e->second = c10::IValue();
      --size_;
    }
  }
  void reserve(size_t uniques) {
    if (uniques > slots_.size()) slots_.resize(uniques);
  }

 private:
  std::deque<Entry> slots_;
  size_t size_ = 0;
};

// A set of values, a flag per Value::unique() (Note [Dense value maps]).
class ValueSet {
 public:
  size_t count(const Value* v) const {
    const size_t i = v->unique();
    return i < flags_.size() && flags_[i] ? 1 : 0;
  }
  void insert(const Value* v) {
    const size_t i = v->unique();
    if (i >= flags_.size()) flags_.resize(i + 1 + i / 4, 0);
    flags_[i] = 1;
  }
  void erase(const Value* v) {
    const size_t i = v->unique();
    if (i < flags_.size()) flags_[i] = 0;
  }
  void reserve(size_t uniques) {
    if (uniques > flags_.size()) flags_.resize(uniques, 0);
  }

 private:
  std::vector<uint8_t> flags_;
};

// What a shadow run found about one value: whether it varies with the dynamic axes, and which
// dims of a tensor do (Note [Varying in another shadow run]).
struct VaryInfo {
  bool varies = false;
  std::vector<bool> unknown_dims;
};

struct Propagator {
  torch::jit::Graph& graph;
  bool fold;
  ValueMap env{};
  ValueSet concrete{};     // content known, not just type
  ValueSet approximate{};  // dtype and rank known, sizes not
  // Note [Dynamic axes]: values that vary with the dynamic axes, with what they are when those
  // axes have other sizes (None: not known, every dim of a tensor varies).
  ValueMap shadow{};
  int shadow_failures = 0;

  // Marks `v` as varying with the dynamic axes; the dims of a tensor that differ from its shadow
  // become unknown in its type.
  void set_shadow(Value* v, c10::IValue value) {
    auto found = env.find(v);
    if (found != env.end() && found->second.isTensor() && !approximate.count(v)) {
      const at::Tensor& t = found->second.toTensor();
      if (t.defined()) {
        const bool comparable =
            value.isTensor() && value.toTensor().defined() && value.toTensor().dim() == t.dim();
        std::vector<c10::optional<int64_t>> sizes;
        for (int64_t d = 0; d < t.dim(); ++d) {
          if (comparable && value.toTensor().size(d) == t.size(d)) {
            sizes.emplace_back(t.size(d));
          } else {
            sizes.emplace_back(c10::nullopt);
          }
        }
        v->setType(c10::TensorType::create(t.scalar_type(), at::Device(at::kCPU),
                                           c10::VaryingShape<int64_t>(sizes),
                                           c10::VaryingShape<int64_t>(sizes.size()), false));
      }
    }
    if (value.isNone()) concrete.erase(v);  // not known in the shadow run: not known
    shadow[v] = std::move(value);
    apply_forced(v);
  }

  // An element of a list whose length or elements vary (x.split(2) over a dynamic axis): the
  // element taken may be any of them, and its dims that differ between them vary.
  bool picks_from_varying_list(Node* node) const {
    static const SymbolSet kPicks = symbols({"aten::__getitem__", "aten::pop"});
    if (!kPicks.count(node->kind()) || node->inputs().empty()) return false;
    auto found = shadow.find(node->input(0));
    return found != shadow.end() && found->second.isList() && env.count(node->input(0));
  }

  // A stand-in shadow for `element` whose dims differ where any tensor of `lists` differs.
  static std::optional<c10::IValue> union_of_elements(const at::Tensor& element,
                                                      const std::vector<c10::IValue>& lists) {
    if (!element.defined()) return std::nullopt;
    std::vector<int64_t> sizes = element.sizes().vec();
    bool any = false;
    for (const auto& list : lists) {
      for (const auto& e : list.toListRef()) {
        if (!e.isTensor() || !e.toTensor().defined() || e.toTensor().dim() != element.dim()) {
          continue;
        }
        for (int64_t d = 0; d < element.dim(); ++d) {
          if (e.toTensor().size(d) != element.size(d) && sizes[d] == element.size(d)) {
            sizes[d] = element.size(d) + 1;
            any = true;
          }
        }
      }
    }
    if (!any) return std::nullopt;
    return c10::IValue(at::empty(sizes, element.options().device(at::kMeta)));
  }

  // Sized for the graph up front (the largest Value::unique() + 1).
  void reserve(size_t uniques) {
    env.reserve(uniques);
    concrete.reserve(uniques);
    approximate.reserve(uniques);
  }

  // Depth of inline_taken_branch, and the constants that replaced outputs folded inside it.
  int inlining = 0;
  std::unordered_map<Value*, Value*> folded_to{};

  // Note [Varying in another shadow run]: what other shadow runs found varying, by value.
  std::unordered_map<const Value*, VaryInfo> forced{};

  bool forced_varies(const Value* v) const {
    auto found = forced.find(v);
    return found != forced.end() && found->second.varies;
  }

  // Makes the dims that vary in another shadow run unknown in `v`'s type.
  void apply_forced(Value* v) {
    if (forced.empty()) return;
    auto found = forced.find(v);
    if (found == forced.end() || found->second.unknown_dims.empty()) return;
    auto type = v->type()->cast<c10::TensorType>();
    if (!type) return;
    auto sizes = type->sizes().sizes();
    if (!sizes || sizes->size() != found->second.unknown_dims.size()) return;
    bool changed = false;
    for (size_t d = 0; d < sizes->size(); ++d) {
      if (found->second.unknown_dims[d] && (*sizes)[d].has_value()) {
        (*sizes)[d] = c10::nullopt;
        changed = true;
      }
    }
    if (!changed) return;
    v->setType(c10::TensorType::create(type->scalarType(), at::Device(at::kCPU),
                                       c10::VaryingShape<int64_t>(*sizes),
                                       c10::VaryingShape<int64_t>(sizes->size()), false));
  }

  // Known, and the same whatever the sizes of the dynamic axes: may become a constant.
  bool foldable(Value* v) const {
    return concrete.count(v) && !shadow.count(v) && !forced_varies(v);
  }

  // Gives `to` the shadow of `from`, if it has one.
  void copy_shadow(Value* to, Value* from) {
    auto found = shadow.find(from);
    if (found != shadow.end())
      set_shadow(to, found->second.isList() ? copy_list(found->second) : found->second);
  }

  // Complete tensor types by dtype, sizes and strides: most values share a few, and building
  // one (TensorType::create works out strides' order and contiguity) costs several allocations.
  // Types are immutable, so values may share one.
  struct TypeKeyHash {
    size_t operator()(const std::vector<int64_t>& key) const {
      size_t h = key.size();
      for (int64_t k : key) h = h * 1000003u ^ static_cast<size_t>(k);
      return h;
    }
  };
  std::unordered_map<std::vector<int64_t>, c10::TensorTypePtr, TypeKeyHash> tensor_types{};
  std::vector<int64_t> type_key{};  // reused: no allocation per lookup

  void set_tensor_type(Value* v, const at::Tensor& t) {
    if (!t.defined()) return;
    type_key.clear();
    type_key.push_back(static_cast<int64_t>(t.scalar_type()));
    type_key.push_back(t.dim());
    type_key.insert(type_key.end(), t.sizes().begin(), t.sizes().end());
    type_key.insert(type_key.end(), t.strides().begin(), t.strides().end());
    auto found = tensor_types.find(type_key);
    if (found == tensor_types.end()) {
      found = tensor_types
                  .emplace(type_key, c10::TensorType::create(t.scalar_type(), at::Device(at::kCPU),
                                                             t.sizes(), t.strides(), false))
                  .first;
    }
    v->setType(found->second);
  }

  void record(Value* v, c10::IValue value, bool is_concrete, bool is_approximate = false) {
    // A value may be recorded again (each pass over a loop body): the latest facts hold.
    concrete.erase(v);
    approximate.erase(v);
    shadow.erase(v);
    if (value.isTensor() && is_approximate) {
      // Note [Approximate values]: computed from a placeholder (a scalar read from tensor data,
      // a data-dependent shape): its dtype and rank are right, its sizes are not known.
      const at::Tensor& t = value.toTensor();
      if (t.defined()) {
        v->setType(c10::TensorType::create(
            t.scalar_type(), at::Device(at::kCPU),
            c10::SymbolicShape(c10::optional<size_t>(t.dim())),
            c10::VaryingShape<c10::Stride>(static_cast<size_t>(t.dim())), false));
      }
    } else if (value.isTensor()) {
      set_tensor_type(v, value.toTensor());
    }
    if (is_concrete && !is_approximate) concrete.insert(v);
    if (is_approximate) approximate.insert(v);
    env[v] = std::move(value);
    apply_forced(v);
  }

  // A stand-in for a scalar whose value depends on tensor data (int(x), x.item(), ...): keeps
  // propagating dtypes and ranks downstream (Note [Approximate values]).
  static std::optional<c10::IValue> placeholder(const Value* v) {
    switch (v->type()->kind()) {
      case c10::TypeKind::IntType:
        return c10::IValue(int64_t{1});
      case c10::TypeKind::FloatType:
        return c10::IValue(1.0);
      case c10::TypeKind::BoolType:
        return c10::IValue(false);
      default:
        return std::nullopt;
    }
  }

  void run_block(torch::jit::Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it++;
      visit_or_inline(node);
    }
  }

  void visit_or_inline(Node* node) {
    if (fold && node->kind() == c10::prim::If && foldable(node->input(0))) {
      inline_taken_branch(node);
    } else if (node->kind() == c10::prim::If) {
      visit_if(node);
    } else if (node->kind() == c10::prim::Loop) {
      visit_loop(node);
    } else {
      visit(node);
    }
  }

  // Note [Types through control flow]
  // An If's outputs have the type both branches agree on; a Loop's carried values have the type
  // that holds for every iteration, found by running the body until the types of its outputs
  // match those of its inputs (a tensor that grows each iteration keeps its dtype and rank, its
  // sizes become unknown: an approximate value). Folding stays off until that fixed point, so no
  // size seen in one iteration becomes a constant.
  void visit_if(Node* node) {
    for (auto* block : node->blocks()) run_block(block);
    for (size_t k = 0; k < node->outputs().size(); ++k) {
      merge_into(node->outputs()[k], node->blocks()[0]->outputs()[k],
                 node->blocks()[1]->outputs()[k]);
    }
  }

  void visit_loop(Node* node) {
    torch::jit::Block* body = node->blocks()[0];
    const size_t carried = node->outputs().size();
    // The iteration number and carried ints/floats change every iteration.
    record(body->inputs()[0], c10::IValue(int64_t{1}), false, true);
    for (size_t k = 0; k < carried; ++k) {
      Value* init = node->inputs()[2 + k];
      Value* in = body->inputs()[1 + k];
      auto found = env.find(init);
      if (found == env.end()) {
        forget(in);
        continue;
      }
      // Scalars and list lengths change with the iteration: never known, never folded.
      bool scalar = found->second.isInt() || found->second.isDouble() || found->second.isBool();
      bool list = found->second.isList();
      c10::IValue start = scalar ? *placeholder(in)
                          : list ? copy_list(found->second)
                                 : found->second;
      record(in, start, false, scalar || list || approximate.count(init) > 0);
      copy_shadow(in, init);
    }
    const bool saved_fold = fold;
    fold = false;
    constexpr int kMaxPasses = 4;
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      run_block(body);
      bool stable = true;
      for (size_t k = 0; k < carried; ++k) {
        Value* in = body->inputs()[1 + k];
        Value* out = body->outputs()[1 + k];
        if (same_signature(in, out)) continue;
        stable = false;
        widen(in, out);
      }
      if (stable) break;
      if (pass == kMaxPasses - 1) {
        for (size_t k = 0; k < carried; ++k) {
          if (!same_signature(body->inputs()[1 + k], body->outputs()[1 + k])) {
            forget(body->inputs()[1 + k]);
          }
        }
      }
    }
    fold = saved_fold;
    if (fold) run_block(body);  // fold what does not depend on the iteration
    for (size_t k = 0; k < carried; ++k) {
      Value* in = body->inputs()[1 + k];
      Value* out = node->outputs()[k];
      if (auto found = env.find(in); found != env.end()) {
        record(out, found->second, false, approximate.count(in) > 0);
        // Widening drops the shadow of a carried value: the initial value's then says it varies.
        copy_shadow(out, in);
        if (!shadow.count(out)) copy_shadow(out, node->inputs()[2 + k]);
      } else {
        forget(out);
      }
    }
  }

  // No facts about `v`: its converter sees an unknown type.
  void forget(Value* v) {
    env.erase(v);
    concrete.erase(v);
    approximate.erase(v);
    if (v->type()->cast<c10::TensorType>()) v->setType(c10::TensorType::get());
  }

  // What must agree between iterations: dtype and sizes of a tensor (rank for an approximate
  // one), the element signature of a list; scalars are placeholders already.
  std::string signature(const c10::IValue& v, bool approx) const {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) return "undefined";
      std::string s = std::string(c10::toString(t.scalar_type())) + "/" + std::to_string(t.dim());
      if (!approx) {
        for (int64_t d : t.sizes()) s += "," + std::to_string(d);
      }
      return s;
    }
    if (v.isList()) {
      auto list = v.toListRef();
      return "[" + (list.empty() ? std::string() : signature(list[0], true)) + "]";
    }
    if (v.isTuple()) {
      std::string s = "(";
      for (const auto& e : v.toTupleRef().elements()) s += signature(e, approx) + ";";
      return s + ")";
    }
    return v.tagKind();
  }

  // Whether the carried input `in` already covers the body's output `out`.
  bool same_signature(Value* in, Value* out) const {
    auto ei = env.find(in), eo = env.find(out);
    if (ei == env.end() || eo == env.end()) return eo == env.end();
    const bool approx = approximate.count(in) > 0;
    if (!approx && approximate.count(out)) return false;  // exact sizes cannot cover unknown ones
    return signature(ei->second, approx) == signature(eo->second, approx);
  }

  // Makes the carried input `in` cover `out` too: the same dtype and rank, sizes unknown.
  void widen(Value* in, Value* out) {
    auto found = env.find(out);
    if (found == env.end()) {
      forget(in);
      return;
    }
    if (!env.count(in)) {  // an uninitialized initial value (a return inside the loop)
      record(in, found->second, false, true);
      return;
    }
    const c10::IValue& cur = env.at(in);
    const c10::IValue& next = found->second;
    if (cur.isTensor() && next.isTensor() &&
        (!cur.toTensor().defined() || !next.toTensor().defined() ||
         cur.toTensor().scalar_type() != next.toTensor().scalar_type() ||
         cur.toTensor().dim() != next.toTensor().dim())) {
      forget(in);
      return;
    }
    // A list keeps the elements of the longer one (an empty list learns its element type).
    c10::IValue widened = cur.isList() && cur.toListRef().empty() ? copy_list(next) : cur;
    record(in, widened, false, true);
  }

  // The type of a control-flow output that is `a` or `b`; it varies with the dynamic axes when
  // either does.
  void merge_into(Value* out, Value* a, Value* b) {
    merge_values(out, a, b);
    if (!env.count(out)) return;
    if (a->node()->kind() != c10::prim::Uninitialized) copy_shadow(out, a);
    if (!shadow.count(out) && b->node()->kind() != c10::prim::Uninitialized) copy_shadow(out, b);
  }

  void merge_values(Value* out, Value* a, Value* b) {
    auto ea = env.find(a), eb = env.find(b);
    // A branch that raises leaves its outputs uninitialized: the other branch decides.
    if (a->node()->kind() == c10::prim::Uninitialized) ea = env.end();
    if (b->node()->kind() == c10::prim::Uninitialized) eb = env.end();
    if (ea == env.end() && eb == env.end()) {
      forget(out);
      return;
    }
    if (ea == env.end() || eb == env.end()) {
      auto& only = ea == env.end() ? *eb : *ea;
      record(out, only.second, false, approximate.count(only.first) > 0);
      return;
    }
    // A list from either branch may have either length.
    const bool approx = approximate.count(a) || approximate.count(b) || ea->second.isList();
    if (signature(ea->second, approx) == signature(eb->second, approx) &&
        !(ea->second.isInt() || ea->second.isDouble() || ea->second.isBool())) {
      // Tensors of unknown sizes: the larger placeholder stands for both (see below).
      const bool b_larger = approx && ea->second.isTensor() && eb->second.isTensor() &&
                            ea->second.toTensor().defined() && eb->second.toTensor().defined() &&
                            eb->second.toTensor().numel() > ea->second.toTensor().numel();
      record(out, b_larger ? eb->second : ea->second, false, approx);
      return;
    }
    if (ea->second.isTensor() && eb->second.isTensor()) {
      const at::Tensor &ta = ea->second.toTensor(), &tb = eb->second.toTensor();
      if (ta.defined() && tb.defined() && ta.scalar_type() == tb.scalar_type() &&
          ta.dim() == tb.dim()) {
        // The larger one stands for both: an empty placeholder (`if x.numel() == 0: return
        // torch.empty(0)`) would make later placeholders disagree (split sizes [0] of a tensor
        // of 1 row).
        record(out, tb.numel() > ta.numel() ? eb->second : ea->second, false, true);
        return;
      }
      forget(out);
      return;
    }
    if (auto stand_in = placeholder(out)) {
      record(out, *stand_in, false, true);
      return;
    }
    record(out, ea->second.isList() && ea->second.toListRef().empty() ? eb->second : ea->second,
           false, true);
  }

  // An If whose condition is known (`if x.device.type == 'cpu'`, `if x.dim() == 4`) is replaced
  // by the nodes of the branch it takes, each propagated as it is inserted.
  // Returns the values that replaced the If's outputs.
  std::vector<Value*> inline_taken_branch(Node* node) {
    torch::jit::Block* taken = node->blocks().at(env.at(node->input(0)).toBool() ? 0 : 1);
    std::unordered_map<Value*, Value*> clones;
    auto map = [&](Value* v) {
      auto it = clones.find(v);
      return it == clones.end() ? v : it->second;
    };
    torch::jit::WithInsertPoint guard(node);
    for (Node* inner : taken->nodes()) {
      Node* clone = graph.insertNode(graph.createClone(inner, map));
      for (size_t i = 0; i < inner->outputs().size(); ++i) {
        clones[inner->outputs()[i]] = clone->outputs()[i];
        auto found = forced.find(inner->outputs()[i]);
        if (found != forced.end()) forced[clone->outputs()[i]] = found->second;
      }
      if (fold && clone->kind() == c10::prim::If && foldable(clone->input(0))) {
        // A nested If is replaced too: later clones must use its replacements, not its
        // (destroyed) outputs.
        std::vector<Value*> replaced = inline_taken_branch(clone);
        for (size_t i = 0; i < inner->outputs().size(); ++i) {
          clones[inner->outputs()[i]] = replaced[i];
        }
      } else {
        ++inlining;
        visit_or_inline(clone);
        --inlining;
        for (size_t i = 0; i < inner->outputs().size(); ++i) {
          auto folded = folded_to.find(clone->outputs()[i]);
          if (folded == folded_to.end()) continue;
          clones[inner->outputs()[i]] = folded->second;
          folded_to.erase(folded);
        }
      }
    }
    std::vector<Value*> replaced;
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      replaced.push_back(map(taken->outputs()[i]));
      node->outputs()[i]->replaceAllUsesWith(replaced.back());
    }
    node->destroy();
    return replaced;
  }

  void visit(Node* node) {
    if (node->kind() == c10::prim::Uninitialized) return;  // no value: the other path decides
    if (node->kind() == c10::prim::Constant) {
      if (auto v = torch::jit::toIValue(node->output())) record(node->output(), *v, true);
      return;
    }
    if (!node->blocks().empty()) return;  // other nodes with blocks: left untyped
    torch::jit::Stack stack, inputs_before;
    stack.reserve(node->inputs().size());
    bool all_concrete = true;
    bool approx = false;
    bool shapes_exact = false;  // approximate only through scalars that do not change the shapes
    for (Value* in : node->inputs()) {
      auto found = env.find(in);
      if (found == env.end()) {
        auto stand_in = placeholder(in);
        if (!stand_in) return;  // unknown input: leave outputs untyped
        stack.push_back(*stand_in);
        all_concrete = false;
        approx = true;
        continue;
      }
      all_concrete = all_concrete && concrete.count(in) > 0;
      approx = approx || approximate.count(in) > 0;
      stack.push_back(found->second);
    }
    static const std::unordered_set<c10::Symbol> kPlumbing = {
        c10::prim::ListConstruct, c10::prim::TupleConstruct, c10::prim::ListUnpack,
        c10::prim::TupleUnpack, c10::prim::unchecked_cast};
    if (!kPlumbing.count(node->kind()) && !node->maybeOperator()) return;
    if (!all_concrete) {
      for (auto& v : stack) v = to_meta(v);
    }
    // Note [Dynamic axes]: the same node on the shadow values, when an input has one.
    // Without one (always, when no axis is dynamic) the shadow stack is not built at all.
    torch::jit::Stack shadow_stack;
    bool shadowed = false;
    bool shadow_unknown = false;  // an input's shadow is not known: nor are the outputs'
    bool scalar_input_varies = false;
    if (!shadow.empty()) {
      for (Value* in : node->inputs()) shadowed = shadowed || shadow.count(in) > 0;
    }
    if (shadowed) shadow_stack.reserve(stack.size());
    for (size_t i = 0; shadowed && i < node->inputs().size(); ++i) {
      Value* in = node->inputs()[i];
      auto found = shadow.find(in);
      if (found == shadow.end()) {
        // A list the node mutates must not be mutated twice.
        shadow_stack.push_back(writes_input(node, i) ? copy_list(stack[i]) : stack[i]);
        continue;
      }
      const c10::IValue& v = found->second;
      shadow_unknown = shadow_unknown || v.isNone();
      scalar_input_varies = scalar_input_varies || v.isInt() || v.isDouble() || v.isBool() ||
                            (v.isTensor() && v.toTensor().defined() && !v.toTensor().is_meta());
      shadow_stack.push_back(v.isNone() ? stack[i] : copy_list(v));
    }
    if (!all_concrete) {
      for (auto& v : shadow_stack) v = to_meta(v);
    }
    try {
      inputs_before = stack;  // an operation pops its inputs even when it throws
      execute(node, stack, inputs_before, all_concrete, approx, shapes_exact, env);
    } catch (const std::exception& e) {
      // No meta kernel (e.g. data-dependent shapes): the converter sees an unknown shape.
      if (std::getenv("TORCHONNX_DEBUG_TYPES")) {
        std::string what = e.what();
        std::cerr << "type propagation: " << node->kind().toQualString() << ": "
                  << what.substr(0, what.find('\n')) << "\n";
      }
      if (!approx || !split_placeholders(node, inputs_before, stack)) return;
    }
    torch::jit::Stack shadow_before;
    if (shadowed) shadow_before = shadow_stack;
    // Approximate results (from placeholders) get a shadow too: later shadow runs need one.
    bool shadow_ok = shadowed && !shadow_unknown;
    if (shadow_ok) {
      try {
        bool shadow_approx = approx, unused = false;
        execute(node, shadow_stack, shadow_before, all_concrete, shadow_approx, unused, shadow);
        shadow_ok = shadow_stack.size() == stack.size();
      } catch (const std::exception& e) {
        shadow_ok = false;
        ++shadow_failures;
        if (std::getenv("TORCHONNX_DEBUG_TYPES")) {
          std::string what = e.what();
          std::cerr << "type propagation (dynamic axes): " << node->kind().toQualString() << ": "
                    << what.substr(0, what.find('\n')) << "\n";
        }
      }
    }
    // Note [Mutated lists]: list ops (append, insert, pop, ...) mutate their list argument; the
    // meta copy the op mutated becomes the list's value for later nodes.
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      if (writes_input(node, i) && inputs_before[i].isList()) {
        env[node->inputs()[i]] = inputs_before[i];
        if (shadow.count(node->inputs()[i])) {
          shadow[node->inputs()[i]] = shadow_ok ? shadow_before[i] : c10::IValue();
        }
      }
    }
    if (stack.size() != node->outputs().size()) return;
    // empty/empty_like/new_empty have undefined contents: never constants.
    static const SymbolSet kUndefinedContents =
        symbols({"aten::empty", "aten::empty_like", "aten::new_empty", "aten::empty_strided"});
    const bool deterministic =
        !node->isNondeterministic() && !kUndefinedContents.count(node->kind());
    for (size_t i = 0; i < stack.size(); ++i) {
      // Tensors are known only when computed from known tensors; non-tensor results of meta
      // tensors (sizes, dims, dtypes) are always known because shapes are static here.
      // An output varies with the dynamic axes when the shadow run gives another value; a
      // number computed from a varying number always varies (n // 100 may agree by chance).
      std::optional<c10::IValue> varies;
      if (shadowed && !shadow_ok) {
        varies = c10::IValue();
      } else if (shadowed) {
        const c10::IValue& a = stack[i];
        const c10::IValue& b = shadow_stack[i];
        bool differ;
        if (a.isTensor() && b.isTensor()) {
          const at::Tensor &x = a.toTensor(), &y = b.toTensor();
          differ = x.defined() != y.defined() || (x.defined() && x.sizes() != y.sizes());
          // A known tensor (NumToTensor(x.size(0)), ...) varies with its contents too.
          // A known tensor computed from a varying number or known tensor varies too, even when
          // the two runs agree by chance (floor(h * 800 / min(h, w)) is 800 for any square
          // image).
          if (!differ && x.defined() && !x.is_meta() && !y.is_meta() && !x.is_quantized()) {
            differ = scalar_input_varies || x.scalar_type() != y.scalar_type() || !at::equal(x, y);
          }
        } else {
          differ = scalar_input_varies || !same_value(a, b);
        }
        if (differ) varies = b;
      }
      // The rank and dtype of an approximate tensor are right: x.dim(), x.dtype are known.
      const bool exact_facts = reads_rank_or_dtype(node) && !holds_tensor(stack[i]);
      bool known = deterministic && (!approx || exact_facts) &&
                   (all_concrete || !holds_tensor(stack[i]) || is_shape_tensor(node));
      bool out_approx = approx && !exact_facts && !(shapes_exact && stack[i].isTensor());
      if (!varies && stack[i].isTensor() && picks_from_varying_list(node)) {
        varies = union_of_elements(stack[i].toTensor(),
                                   {env.at(node->input(0)), shadow.at(node->input(0))});
      }
      record(node->outputs()[i], std::move(stack[i]), known, out_approx);
      if (varies) set_shadow(node->outputs()[i], std::move(*varies));
    }
    if (fold) fold_outputs(node);
  }

  // Note [Data-dependent ops on known values]: a data-dependent op whose result sizes come only
  // from inputs whose values are known gives exact sizes on zeros (the known inputs keep their
  // values there): repeat_interleave(x, repeats) with repeats computed from sizes (torchvision's
  // MViT positional encoding: repeat_interleave(temporal_pos, NumToTensor(size), 0)),
  // masked_select(x, mask) and x[mask] with a known mask. Left approximate, every size after them
  // would be a placeholder, and placeholders read through int(tensor) are 1 (Note [Approximate
  // values]): a reshape by heads * batch then fails on them.
  bool sizes_from_known_values(const Node* node) const {
    static const c10::Symbol kRepeatInterleave =
        c10::Symbol::fromQualString("aten::repeat_interleave");
    static const c10::Symbol kMaskedSelect = c10::Symbol::fromQualString("aten::masked_select");
    static const c10::Symbol kIndex = c10::Symbol::fromQualString("aten::index");
    const auto known = [&](size_t i) {
      return i < node->inputs().size() && concrete.count(node->input(i)) > 0;
    };
    if (node->kind() == kRepeatInterleave) {
      // repeat_interleave(repeats, output_size) or repeat_interleave(self, repeats, dim, ...).
      const bool repeats_first = node->inputs().size() <= 2;
      return known(repeats_first ? 0 : 1);
    }
    if (node->kind() == kMaskedSelect || node->kind() == kIndex) return known(1);
    return false;
  }

  // Whether `node` may run on zeros for its result sizes (Note [Zeros fallback]).
  bool exact_on_zeros(const Node* node, bool all_concrete, const torch::jit::Stack& inputs) const {
    if (can_run_on_zeros(node, inputs)) return true;
    return !all_concrete && !node->isNondeterministic() && sizes_from_known_values(node) &&
           small_enough(inputs);
  }

  // Runs `node` on `stack` (its `inputs`), on meta tensors unless all inputs are concrete, falling
  // back to zeros where libtorch has no meta kernel (Note [Zeros fallback]); sets `approx` when
  // only dtypes and ranks of the results can be trusted.
  void execute(Node* node, torch::jit::Stack& stack, const torch::jit::Stack& inputs,
               bool all_concrete, bool& approx, bool& shapes_exact, const ValueMap& values) {
    // As for the zeros fallback these ops took before, shapes_exact stays false.
    if (!all_concrete && apply_shape_rule(node, stack)) return;
    static const c10::Symbol kNms = c10::Symbol::fromQualString("torchvision::nms");
    if (!all_concrete && node->kind() == kNms && stack.size() == 3 && stack[0].isTensor() &&
        stack[0].toTensor().defined() && stack[0].toTensor().dim() == 2) {
      // The kept indices, as many as there are boxes at most: running nms on placeholder boxes
      // (all equal, IoU NaN, nothing suppressed) costs O(n^2) for the 10^5 anchors of a
      // detection model.
      const at::Tensor& boxes = stack[0].toTensor();
      stack.assign(1, c10::IValue(at::empty({boxes.size(0)},
                                            boxes.options().dtype(at::kLong).device(at::kMeta))));
      approx = true;
      return;
    }
    // Note [Ops without a meta kernel]: an op seen failing for want of a meta kernel goes to the
    // zeros straight away (the same results, without the cost of one more c10::Error).
    const bool skip_meta =
        !all_concrete && lacks_meta_kernel(node) && exact_on_zeros(node, all_concrete, inputs);
    if (!skip_meta) {
      try {
        run_node(node, stack);
        // Real inputs (quantized tensors) give real outputs: back to meta for the next nodes.
        // A tensor of sizes (_shape_as_tensor) stays real: its contents are known from the
        // input's sizes (Note [Shapes as tensors]).
        if (!all_concrete && !is_shape_tensor(node)) {
          for (auto& v : stack) v = to_meta(v);
        }
        shapes_exact = approx && shapes_independent_of_scalars(node, inputs, stack);
        return;
      } catch (const c10::NotImplementedError&) {
        if (!all_concrete && on_meta(inputs)) remember_lacks_meta_kernel(node);
        if (all_concrete || !exact_on_zeros(node, all_concrete, inputs)) {
          if (all_concrete || !is_data_dependent(node) || !small_enough(inputs)) throw;
          approx = true;
        }
      } catch (const std::exception& e) {
        if (std::getenv("TORCHONNX_DEBUG_TYPES") && !all_concrete) {
          std::string what = e.what();
          std::cerr << "type propagation: " << node->kind().toQualString()
                    << " failed on meta tensors, trying zeros: " << what.substr(0, what.find('\n'))
                    << "\n";
        }
        if (all_concrete || !exact_on_zeros(node, all_concrete, inputs)) {
          // Data-dependent results (nonzero, int(x), ...): run on zeros for dtype and rank only.
          if (all_concrete || !is_data_dependent(node) || !small_enough(inputs)) throw;
          approx = true;
        }
      }
    }
    // Known inputs (constant index tensors, ...) keep their values; the others become zeros.
    stack.clear();
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value* in = node->inputs()[i];
      if (concrete.count(in)) {
        auto found = values.find(in);
        stack.push_back(found != values.end() ? found->second : env.at(in));
      } else {
        static const SymbolSet kDivisions =
            symbols({"aten::floor_divide", "aten::div", "aten::remainder", "aten::fmod"});
        stack.push_back(meta_to_zeros(inputs[i], approx && is_data_dependent(node),
                                      i >= 1 && kDivisions.count(node->kind()) > 0));
      }
    }
    fix_zero_offsets(node, stack);
    run_node(node, stack);
    for (auto& v : stack) {
      v = to_meta(v);
      // A scalar read from zeros would make later sizes 0 (view(x, [n, -1]) fails).
      if (approx && v.isInt()) v = int64_t{1};
      if (approx && v.isDouble()) v = 1.0;
    }
  }

  // Note [Shapes independent of scalars]: an output computed from an approximate scalar (a loop's
  // iteration number, int(x)) usually has a shape that does not depend on it (x * i, x[i]). When
  // every approximate input is a scalar and the node gives tensors of the same sizes with other
  // values of those scalars, its tensor outputs keep their sizes.
  bool shapes_independent_of_scalars(Node* node, const torch::jit::Stack& inputs,
                                     const torch::jit::Stack& outputs) {
    torch::jit::Stack again;
    bool changed = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value* in = node->inputs()[i];
      const c10::IValue& v = inputs[i];
      const bool uncertain = !env.count(in) || approximate.count(in);
      if (!uncertain) {
        again.push_back(v);
        continue;
      }
      if (v.isInt()) {
        again.emplace_back(v.toInt() + 1);
      } else if (v.isDouble()) {
        again.emplace_back(v.toDouble() + 1.0);
      } else if (v.isBool()) {
        again.emplace_back(!v.toBool());
      } else {
        return false;  // an approximate tensor or list: its sizes are unknown already
      }
      changed = true;
    }
    if (!changed) return false;
    try {
      run_node(node, again);
    } catch (const std::exception&) {
      return false;
    }
    if (again.size() != outputs.size()) return false;
    bool any_tensor = false;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].isTensor()) continue;
      if (!again[i].isTensor() || !outputs[i].toTensor().defined() ||
          !again[i].toTensor().defined() ||
          outputs[i].toTensor().sizes() != again[i].toTensor().sizes()) {
        return false;
      }
      any_tensor = true;
    }
    return any_tensor;
  }

  void fold_outputs(Node* node) {
    for (Value* out : node->outputs()) {
      // A node just cloned by inline_taken_branch has no uses yet: it is folded too, and the
      // later clones take the constant (folded_to).
      if (!foldable(out) || (!out->hasUses() && !inlining) || is_mutated(out)) continue;
      const c10::IValue& v = env[out];
      if (!is_foldable(v)) continue;
      torch::jit::WithInsertPoint guard(node);
      auto constant = graph.insertConstant(v);
      if (v.isTensor()) set_tensor_type(constant, v.toTensor());
      env[constant] = v;
      concrete.insert(constant);
      out->replaceAllUsesWith(constant);
      if (inlining) folded_to[out] = constant;
    }
  }
};

}  // namespace

namespace {

size_t max_unique(torch::jit::Block* block) {
  size_t n = 0;
  for (Value* v : block->inputs()) n = std::max(n, v->unique());
  for (Node* node : block->nodes()) {
    for (Value* v : node->outputs()) n = std::max(n, v->unique());
    for (torch::jit::Block* sub : node->blocks()) n = std::max(n, max_unique(sub));
  }
  return n;
}

// Every value of `block` in a fixed order (a block's inputs, then each node's outputs followed by
// its blocks'): the same order in a graph and in its copy.
void collect_values(torch::jit::Block* block, std::vector<Value*>& out) {
  for (Value* v : block->inputs()) out.push_back(v);
  for (Node* node : block->nodes()) {
    for (Value* v : node->outputs()) out.push_back(v);
    for (torch::jit::Block* sub : node->blocks()) collect_values(sub, out);
  }
}

// The sizes a dynamic input has in a shadow run: `sizes` with its dynamic `dims` changed.
using ShadowSizes =
    std::function<std::vector<int64_t>(std::vector<int64_t>, const std::vector<int64_t>&)>;

// Propagates over `graph`, with the dynamic dims of the inputs given other sizes by
// `shadow_sizes`; returns the number of nodes the shadow run failed on. `forced`: values that
// vary in other shadow runs (in the order of collect_values); `found`: receives what this run
// found varying.
int propagate(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs, bool fold,
              const DynamicDims& dynamic, const ShadowSizes& shadow_sizes,
              const std::vector<VaryInfo>* forced = nullptr,
              std::vector<VaryInfo>* found = nullptr) {
  Propagator p{graph, fold};
  p.reserve(max_unique(graph.block()) + 1);
  if (forced) {
    std::vector<Value*> values;
    collect_values(graph.block(), values);
    for (size_t i = 0; i < values.size() && i < forced->size(); ++i) {
      const VaryInfo& info = (*forced)[i];
      if (info.varies || !info.unknown_dims.empty()) p.forced[values[i]] = info;
    }
  }
  for (size_t i = 0; i < graph.inputs().size() && i < inputs.size(); ++i) {
    Value* in = graph.inputs()[i];
    if (!inputs[i].isTensor()) continue;
    const at::Tensor& t = inputs[i].toTensor();
    p.record(in, to_meta(t), false);
    auto dims = dynamic.find(i);
    if (dims == dynamic.end() || dims->second.empty() || !t.defined()) continue;
    p.set_shadow(
        in, at::empty(shadow_sizes(t.sizes().vec(), dims->second), t.options().device(at::kMeta)));
  }
  p.run_block(graph.block());
  if (found) {
    std::vector<Value*> values;
    collect_values(graph.block(), values);
    found->assign(values.size(), VaryInfo{});
    for (size_t i = 0; i < values.size(); ++i) {
      Value* v = values[i];
      VaryInfo& info = (*found)[i];
      info.varies = p.shadow.count(v) > 0;
      if (!info.varies || !p.env.count(v) || p.approximate.count(v)) continue;
      auto type = v->type()->cast<c10::TensorType>();
      auto sizes = type ? type->sizes().sizes() : c10::nullopt;
      if (!sizes) continue;
      info.unknown_dims.resize(sizes->size());
      for (size_t d = 0; d < sizes->size(); ++d) info.unknown_dims[d] = !(*sizes)[d].has_value();
    }
  }
  return p.shadow_failures;
}

}  // namespace

// Note [Dynamic axes]
// A dim named in dynamic_axes has the example's size only in the example. Every value is
// propagated twice over: on the example, and on a shadow where the dynamic dims have other sizes.
// A number, list or known tensor that differs between the two (x.size(0), [b, -1],
// NumToTensor(b)) varies: it stays known in each run (so view(x, [b, -1]) still propagates), but
// is never folded, so the converters compute it in the graph (Shape, Gather, Concat) instead of
// baking the example's value; a tensor dim that differs is unknown in the value's type (written
// as a dim without a value, or with the axis's name on graph inputs and outputs). A model whose
// shadow run fails somewhere (a reshape to a fixed size, a broadcast against a fixed dim) is tried
// with other shadow sizes; where every choice fails, the results of that node vary entirely.
//
// Note [Varying in another shadow run]
// One shadow run can agree with the example by chance: a detection model resizes its image so
// that the shorter side is 800, so a square example and a square shadow (2h+1 x 2w+1) give the
// same resized sizes, and every size after the resize would look static. Two more shadow runs, of
// other aspect ratios (h+1 x 2w+1 ..., stretched; and a square of the largest dynamic size), are
// made on copies of the graph; a value that varies in any run that failed no more often than the
// chosen one varies (is not folded; its varying dims are unknown in its type).
void PropagateTypes(torch::jit::Graph& graph, const std::vector<c10::IValue>& inputs, bool fold,
                    const DynamicDims& dynamic) {
  bool any = false;
  for (const auto& [i, dims] : dynamic) any = any || !dims.empty();
  if (!any) {
    propagate(graph, inputs, fold, dynamic, nullptr);
    return;
  }
  auto each = [](std::function<int64_t(int64_t)> f) -> ShadowSizes {
    return [f](std::vector<int64_t> sizes, const std::vector<int64_t>& dims) {
      for (int64_t d : dims) sizes[d] = f(sizes[d]);
      return sizes;
    };
  };
  const std::vector<ShadowSizes> choices = {each([](int64_t s) { return 2 * s + 1; }),
                                            each([](int64_t s) { return s + 1; }),
                                            each([](int64_t s) { return s > 1 ? s - 1 : s + 2; })};
  const std::vector<ShadowSizes> others = {
      [](std::vector<int64_t> sizes, const std::vector<int64_t>& dims) {
        for (size_t k = 0; k < dims.size(); ++k) {
          sizes[dims[k]] = sizes[dims[k]] * static_cast<int64_t>(k + 1) + 1;
        }
        return sizes;
      },
      [](std::vector<int64_t> sizes, const std::vector<int64_t>& dims) {
        int64_t largest = 0;
        for (int64_t d : dims) largest = std::max(largest, sizes[d]);
        for (int64_t d : dims) sizes[d] = 2 * largest + 1;
        return sizes;
      }};
  size_t best = 0;
  int fewest = -1;
  for (size_t c = 0; c < choices.size(); ++c) {
    auto trial = graph.copy();
    int failures = propagate(*trial, inputs, false, dynamic, choices[c]);
    if (fewest < 0 || failures < fewest) {
      fewest = failures;
      best = c;
    }
    if (failures == 0) break;
  }
  std::vector<VaryInfo> forced;
  for (const ShadowSizes& other : others) {
    auto trial = graph.copy();
    std::vector<VaryInfo> found;
    if (propagate(*trial, inputs, false, dynamic, other, nullptr, &found) > fewest) continue;
    if (forced.empty()) {
      forced = std::move(found);
      continue;
    }
    for (size_t i = 0; i < forced.size() && i < found.size(); ++i) {
      forced[i].varies = forced[i].varies || found[i].varies;
      if (forced[i].unknown_dims.empty()) {
        forced[i].unknown_dims = found[i].unknown_dims;
      } else if (found[i].unknown_dims.size() == forced[i].unknown_dims.size()) {
        for (size_t d = 0; d < found[i].unknown_dims.size(); ++d) {
          forced[i].unknown_dims[d] = forced[i].unknown_dims[d] || found[i].unknown_dims[d];
        }
      }
    }
  }
  propagate(graph, inputs, fold, dynamic, choices[best], forced.empty() ? nullptr : &forced);
}

}  // namespace torchonnx::passes
