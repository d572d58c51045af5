// Running one node of the type propagation (Note [Type propagation on meta tensors] in
// propagate_types.cpp): on meta tensors, through a shape rule (shape_rules.cpp), or on zeros
// where libtorch 1.13 has no meta kernel (Note [Zeros fallback]).
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <unordered_set>

#include "passes/type_propagation/propagator.h"

namespace torchonnx::passes::type_propagation {

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
    at::Tensor meta = at::empty(t.sizes(), t.options().device(at::kMeta));
    // Note [Scalars recorded as tensors]: type promotion still sees a wrapped number.
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) {
      meta.unsafeGetTensorImpl()->set_wrapped_number(true);
    }
    return meta;
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor t : v.toTensorList()) list.push_back(to_meta(t).toTensor());
    return list;
  }
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    for (const c10::IValue e : list) out.push_back(to_meta(e));
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

bool holds_meta_tensor(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() && v.toTensor().is_meta();
  if (v.isTensorList()) {
    for (const at::Tensor t : v.toTensorList()) {
      if (t.defined() && t.is_meta()) return true;
    }
    return false;
  }
  if (v.isList()) {
    for (const auto& e : v.toList()) {
      if (holds_meta_tensor(e)) return true;
    }
  }
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) {
      if (holds_meta_tensor(e)) return true;
    }
  }
  return false;
}

// Note [Facts known at export]
// The exported model runs without autograd or autocast, on plain (not nested) tensors:
// torch.is_grad_enabled(), torch.is_autocast_enabled(), x.requires_grad and x.is_nested are
// False in it, as in eager inference under torch.no_grad(): the fused kernels these checks guard
// are taken where they have converters (_transformer_encoder_layer_fwd,
// _native_multi_head_attention). torch._nested_tensor_from_mask_left_aligned (a scripted
// nn.TransformerEncoder's check of its padding mask before it packs a nested tensor) is True:
// Note [Nested tensors from a padding mask] in passes/lower_nested_from_mask.cpp. Type
// propagation and the converters (ops/prim.cpp) give the same answers.
std::optional<bool> known_at_export(const Node* node) {
  static const SymbolSet kFalse =
      symbols({"aten::is_grad_enabled", "aten::is_autocast_enabled",
               "aten::is_autocast_cpu_enabled", "prim::requires_grad", "prim::is_nested"});
  static const c10::Symbol kLeftAligned =
      c10::Symbol::fromQualString("aten::_nested_tensor_from_mask_left_aligned");
  if (node->outputs().size() != 1) return std::nullopt;
  if (kFalse.count(node->kind())) return false;
  if (node->kind() == kLeftAligned) return true;
  return std::nullopt;
}

// Ops that read only the rank, dtype or device of their tensor input: exact on approximate
// values (Note [Approximate values]), so that `if x.dim() == 4` in scripted helpers still folds.
bool reads_rank_or_dtype(const Node* node) {
  static const SymbolSet kOps =
      symbols({"aten::dim", "prim::dtype", "prim::device", "aten::is_floating_point",
               "aten::is_complex", "prim::layout", "prim::is_cuda", "aten::get_device"});
  return kOps.count(node->kind()) > 0;
}

// A list value of its own: list ops on meta values mutate the list they are given, and values
// that flow into a loop or branch must not change the list outside it.
c10::IValue copy_list(const c10::IValue& v) {
  return v.isList() ? c10::IValue(v.toList().copy()) : v;
}

namespace {

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
      if (list.size() != node->outputs().size()) {
        throw std::runtime_error("prim::ListUnpack: a list of " + std::to_string(list.size()) +
                                 " elements unpacked into " +
                                 std::to_string(node->outputs().size()));
      }
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
  // A nested tensor made from a padding mask stands as the padded tensor (Note [Nested tensors
  // from a padding mask]), and so does padding it back.
  static const SymbolSet kNestedPadded =
      symbols({"aten::_nested_tensor_from_mask", "aten::to_padded_tensor"});
  if (kNestedPadded.count(node->kind()) && !stack.empty() && stack[0].isTensor()) {
    stack.resize(1);
    return;
  }
  if (apply_convolution_rule(node, stack)) return;
  // A vararg operator with an operation of its own (aten::format) pops the number of its inputs
  // first, as the interpreter pushes it (its OPN instruction); one made for its node
  // (prim::ConstantChunk) knows it from the node.
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (schema != nullptr && schema->is_vararg() && node->getOperator().hasOperation()) {
    stack.emplace_back(static_cast<int64_t>(node->inputs().size()));
  }
  node->getOperation()(stack);
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
// rule in shape_rules.cpp), and exact for shapes because these ops' shapes do not depend on values.
bool small_enough(const torch::jit::Stack& stack) {
  constexpr int64_t kMaxElements = int64_t{1} << 26;
  int64_t total = 0;
  for (const auto& v : stack) total += tensor_elements(v);
  return total <= kMaxElements;
}

// A random op's samples depend on the generator, not its shapes (bernoulli.out, libtorch 1.13's
// without a meta kernel): its results on zeros are exact for shapes too. They are never known
// values (the propagator keeps nondeterministic results unknown).
bool can_run_on_zeros(const Node* node, const torch::jit::Stack& stack) {
  if (is_data_dependent(node)) return false;
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
    for (const at::Tensor t : v.toTensorList()) list.push_back(meta_to_zeros(t, ones).toTensor());
    return list;
  }
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    for (const c10::IValue e : list) out.push_back(meta_to_zeros(e, ones));
    return out;
  }
  return v;
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

}  // namespace

// Note [Data-dependent ops on known values]: a data-dependent op whose result sizes come only
// from inputs whose values are known gives exact sizes on zeros (the known inputs keep their
// values there): repeat_interleave(x, repeats) with repeats computed from sizes (torchvision's
// MViT positional encoding: repeat_interleave(temporal_pos, NumToTensor(size), 0)),
// masked_select(x, mask) and x[mask] with a known mask. Left approximate, every size after them
// would be a placeholder, and placeholders read through int(tensor) are 1 (Note [Approximate
// values]): a reshape by heads * batch then fails on them.
bool Propagator::sizes_from_known_values(const Node* node) const {
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

// The results of an RNN op whose initial states are stack[hx_at] (a tensor or a list of them, each
// (layers * directions, batch, hidden)): an output of `lead` sizes and each direction's hidden
// size, then the final states of hx's sizes. False when the states are not of that form.
static bool rnn_results(torch::jit::Stack& stack, size_t hx_at, const at::Tensor& input,
                        std::vector<int64_t> lead, int64_t directions) {
  std::vector<at::Tensor> hx;
  if (stack[hx_at].isTensorList()) {
    for (const at::Tensor& h : stack[hx_at].toTensorVector()) hx.push_back(h);
  } else if (stack[hx_at].isTensor()) {
    hx.push_back(stack[hx_at].toTensor());
  }
  if (hx.empty() || !hx[0].defined() || hx[0].dim() != 3) return false;
  const auto meta = input.options().device(at::kMeta);
  lead.push_back(directions * hx[0].size(2));
  torch::jit::Stack out{at::empty(lead, meta)};
  for (const at::Tensor& h : hx) out.emplace_back(at::empty(h.sizes(), meta));
  stack = std::move(out);
  return true;
}

// Whether `node` may run on zeros for its result sizes (Note [Zeros fallback]).
bool Propagator::exact_on_zeros(const Node* node, bool all_concrete,
                                const torch::jit::Stack& inputs) const {
  if (can_run_on_zeros(node, inputs)) return true;
  return !all_concrete && !node->isNondeterministic() && sizes_from_known_values(node) &&
         small_enough(inputs);
}

// Runs `node` on `stack` (its `inputs`), on meta tensors unless all inputs are concrete, falling
// back to zeros where libtorch has no meta kernel (Note [Zeros fallback]); sets `approx` when
// only dtypes and ranks of the results can be trusted.
void Propagator::execute(Node* node, torch::jit::Stack& stack, const torch::jit::Stack& inputs,
                         bool all_concrete, bool& approx, bool& shapes_exact,
                         const ValueMap& values) {
  // Note [Channels of a convolution] in shape_rules.cpp.
  if (&values == &shadow) fit_convolution_channels(node, stack);
  // As for the zeros fallback these ops took before, shapes_exact stays false.
  if (!all_concrete && apply_shape_rule(node, stack)) return;
  // Packing: the rows of a PackedSequence's data depend on the lengths (data), as do the batch
  // and steps of its padded form. Dtypes and ranks (approximate sizes), which the RNN converters
  // need; a run on zeros fails (lengths must be positive).
  static const c10::Symbol kPack = c10::Symbol::fromQualString("aten::_pack_padded_sequence");
  static const c10::Symbol kPad = c10::Symbol::fromQualString("aten::_pad_packed_sequence");
  if ((node->kind() == kPack || node->kind() == kPad) && stack.size() >= 3 && stack[0].isTensor() &&
      stack[1].isTensor() && stack[2].isBool() && stack[0].toTensor().defined() &&
      stack[1].toTensor().defined()) {
    const at::Tensor& x = stack[0].toTensor();
    const bool batch_first = stack[2].toBool();
    const auto meta = x.options().device(at::kMeta);
    std::vector<int64_t> sizes = x.sizes().vec();
    if (node->kind() == kPack && x.dim() >= 2) {
      const int64_t steps = x.size(batch_first ? 1 : 0);
      sizes.erase(sizes.begin());
      sizes[0] = steps * x.size(batch_first ? 0 : 1);
      stack.assign({c10::IValue(at::empty(sizes, meta)),
                    c10::IValue(at::empty({steps}, meta.dtype(at::kLong)))});
      approx = true;
      return;
    }
    if (node->kind() == kPad && x.dim() >= 1) {
      const int64_t steps = stack[1].toTensor().size(0);
      const int64_t batch = 1;  // batch_sizes[0]: data
      sizes.erase(sizes.begin());
      const std::vector<int64_t> lead =
          batch_first ? std::vector<int64_t>{batch, steps} : std::vector<int64_t>{steps, batch};
      sizes.insert(sizes.begin(), lead.begin(), lead.end());
      stack.assign({c10::IValue(at::empty(sizes, meta)),
                    c10::IValue(at::empty({batch}, meta.dtype(at::kLong)))});
      approx = true;
      return;
    }
  }
  // RNNs over packed data (lstm.data, gru.data, ...: data, batch_sizes, hx, params, has_biases,
  // num_layers, dropout, train, bidirectional): the output has the data's rows and the hidden
  // size of each direction; the final states have hx's sizes.
  static const SymbolSet kPackedRnns =
      symbols({"aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu"});
  if (kPackedRnns.count(node->kind()) && stack.size() == 9 && stack[0].isTensor() &&
      stack[1].isTensor() && stack[8].isBool() && stack[0].toTensor().defined() &&
      stack[0].toTensor().dim() == 2) {
    const at::Tensor& data = stack[0].toTensor();
    const int64_t directions = stack[8].toBool() ? 2 : 1;
    if (rnn_results(stack, 2, data, {data.size(0)}, directions)) {
      approx = true;
      return;
    }
  }
  // RNNs over a padded batch (lstm.input, rnn_relu.input, ...: input, hx, params, has_biases,
  // num_layers, dropout, train, bidirectional, batch_first): the output has the input's steps and
  // batch and each direction's hidden size; the final states have hx's sizes. (rnn_relu has no
  // meta kernel on libtorch 2.6, and running it on zeros meets its weights list as meta tensors.)
  if (kPackedRnns.count(node->kind()) && stack.size() == 9 && stack[0].isTensor() &&
      stack[7].isBool() && stack[8].isBool() && stack[0].toTensor().defined() &&
      stack[0].toTensor().dim() == 3) {
    const at::Tensor& input = stack[0].toTensor();
    const int64_t directions = stack[7].toBool() ? 2 : 1;
    if (rnn_results(stack, 1, input, {input.size(0), input.size(1)}, directions)) return;
  }
  // An element of a list read at an index not known at export (a loop's iteration number, whose
  // placeholder may be past the end of a short list: `for e in [a]`), or of a list whose length
  // is not known (built in a loop, whose value here holds the elements of one iteration): the
  // first element stands for the others (the same dtype; its sizes approximate).
  if (node->kind() == c10::aten::__getitem__ && stack.size() == 2 && stack[0].isList() &&
      stack[1].isInt() && (!concrete.count(node->input(1)) || approximate.count(node->input(0)))) {
    const auto n = static_cast<int64_t>(stack[0].toListRef().size());
    const int64_t i = stack[1].toInt();
    if (n > 0 && (i >= n || i < -n)) {
      stack[1] = c10::IValue(int64_t{0});
      approx = true;
    }
  }
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
  // A reshape or view that fails on sizes computed from approximate scalars (the length of a list
  // built in a loop, whose value here holds one iteration's elements): the rank (the sizes'
  // count) and the dtype are known, the sizes not. An approximate size (or -1) becomes 1, which
  // broadcasts against the true size later.
  static const SymbolSet kReshapes = symbols({"aten::reshape", "aten::view"});
  auto reshape_to_approximate_sizes = [&] {
    if (all_concrete || !kReshapes.count(node->kind()) || inputs.size() != 2 ||
        !inputs[0].isTensor() || !inputs[0].toTensor().defined() || !inputs[1].isIntList() ||
        !approximate.count(node->input(1))) {
      return false;
    }
    std::vector<int64_t> sizes = inputs[1].toIntVector();
    const Node* list = node->input(1)->node();
    const bool per_element =
        list->kind() == c10::prim::ListConstruct && list->inputs().size() == sizes.size();
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 0 || !per_element || approximate.count(list->input(i))) sizes[i] = 1;
    }
    stack.assign({c10::IValue(at::empty(sizes, inputs[0].toTensor().options().device(at::kMeta)))});
    approx = true;
    return true;
  };
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
      if (reshape_to_approximate_sizes()) return;
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
      // A known list may hold meta tensors (an RNN's weights list): zeros too, or an op without
      // a meta kernel inside the op (relu inside rnn_relu on libtorch 2.6) meets them.
      stack.push_back(meta_to_zeros(found != values.end() ? found->second : env.at(in)));
    } else {
      static const SymbolSet kDivisions =
          symbols({"aten::floor_divide", "aten::div", "aten::remainder", "aten::fmod"});
      stack.push_back(meta_to_zeros(inputs[i], approx && is_data_dependent(node),
                                    i >= 1 && kDivisions.count(node->kind()) > 0));
    }
  }
  fix_zero_offsets(node, stack);
  torch::jit::Stack zeros = stack;
  try {
    run_node(node, stack);
  } catch (const std::exception&) {
    if (!run_on_examples(node, zeros, stack, values)) throw;
    approx = true;
  }
  for (auto& v : stack) {
    v = to_meta(v);
    // A scalar read from zeros would make later sizes 0 (view(x, [n, -1]) fails).
    if (approx && v.isInt()) v = int64_t{1};
    if (approx && v.isDouble()) v = 1.0;
  }
}

// Note [Running on the example values]: an op that fails on zeros in place of its inputs
// (tensor_split by a tensor of sections: "number of sections must be larger than 0"; istft of a
// window given as an input: "window overlap add min: 0") may run on the example inputs' values when
// each input it reads that is not known (concrete) is a graph input. Its outputs are then right for
// these inputs only: dtype and rank, approximate sizes.
bool Propagator::run_on_examples(Node* node, const torch::jit::Stack& zeros,
                                 torch::jit::Stack& stack, const ValueMap& values) {
  stack = zeros;
  bool any = false;
  for (size_t i = 0; i < node->inputs().size() && i < stack.size(); ++i) {
    Value* in = node->inputs()[i];
    if (concrete.count(in) || !stack[i].isTensor()) continue;
    // A shadow run's input of other sizes (Note [Dynamic axes]): the example is not it, and its
    // results would be the example's, so the node's outputs would look static.
    if (&values == &shadow && shadow.count(in)) return false;
    auto example = examples.find(in);
    if (example == examples.end()) return false;
    stack[i] = example->second;
    any = true;
  }
  if (!any) return false;
  try {
    run_node(node, stack);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// Note [Shapes independent of scalars]: an output computed from an approximate scalar (a loop's
// iteration number, int(x)) usually has a shape that does not depend on it (x * i, x[i]). When
// every approximate input is a scalar and the node gives tensors of the same sizes with other
// values of those scalars, its tensor outputs keep their sizes.
bool Propagator::shapes_independent_of_scalars(Node* node, const torch::jit::Stack& inputs,
                                               const torch::jit::Stack& outputs) {
  // Each uncertain scalar moved by `step`: +1, then -1 when that run fails (x[i] with i the
  // placeholder 1 on a dim of size 2 has no index 2, but has 0).
  for (int64_t step : {int64_t{1}, int64_t{-1}}) {
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
        again.emplace_back(v.toInt() + step);
      } else if (v.isDouble()) {
        again.emplace_back(v.toDouble() + static_cast<double>(step));
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
      continue;
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
  return false;
}

}  // namespace torchonnx::passes::type_propagation
