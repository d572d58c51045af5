// Factory overloads: the positions of an overload's keyword arguments, given at registration.
//
// Note [Factory overloads]
// The overloads of a tensor factory (zeros, arange, rand, hann_window, ...) differ in their
// positional arguments (arange's end | start, end | start, end, step) and in their keyword tail,
// which is, in this order: a `generator`, `names`, then either `dtype` (followed by layout, device,
// pin_memory and maybe memory_format) or an `out` tensor (after a memory_format in empty.out and
// the *_like.out forms). Every overload is registered with its positional count and its tail, so
// that the converter reads each argument at its overload's position; an overload not registered
// is not converted (the unconvertible-op error names it). The registration checks the positions
// against the schema of every overload this libtorch has (std::logic_error on a mismatch, as for
// overlapping ranges), so a wrong table fails every test that builds the registry.
// What holds for every overload is checked once before the converter runs: `names` is None
// (TorchScript has no named tensors), `generator` is None (ONNX random ops take no generator
// state), and an `out` tensor is not read after the node (the result is a new ONNX value; the
// model would read the old tensor).
#pragma once

#include <ATen/core/ScalarType.h>

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

#include "symbolic/registry.h"

namespace torchonnx::symbolic {

// The keyword arguments an overload has after its positional ones (see the note).
enum FactoryTail : unsigned {
  kNoTail = 0,
  kGenerator = 1u << 0,     // Generator? generator
  kNames = 1u << 1,         // str[]? names
  kDtype = 1u << 2,         // ScalarType? dtype, layout, device, pin_memory[, memory_format]
  kOut = 1u << 3,           // Tensor(a!) out
  kMemoryFormat = 1u << 4,  // MemoryFormat? memory_format before out
};

struct FactoryOverload {
  const char* name;  // the schema's overload name, "" for the unnamed overload
  size_t positional;
  unsigned tail;
};

// Where one overload keeps its arguments.
struct FactoryArgs {
  size_t positional = 0;
  std::optional<size_t> generator, names, dtype, out;
};

FactoryArgs factory_args(size_t positional, unsigned tail);

using FactoryConverter = std::function<Values(GraphContext&, const Args&, const FactoryArgs&)>;

// Registers `fn` for each of `kind`'s `overloads` ("kind.name"; the unnamed one serves that
// overload only), passing that overload's positions.
void add_factory(Registry& r, const std::string& kind, OpsetRange range,
                 std::initializer_list<FactoryOverload> overloads, const FactoryConverter& fn);

// A torch.Generator has no ONNX form: fails when an argument of the node is a generator that is not
// None (the factories check it before their converter; multinomial and normal_ call it).
void reject_generator(GraphContext& g, const Args& a);

// A factory's result dtype: its `dtype` argument when given, else the output's type from type
// propagation, else the `out` tensor's, else `fallback` (PyTorch's default for the op).
at::ScalarType result_dtype(const Args& a, const FactoryArgs& f, at::ScalarType fallback);

}  // namespace torchonnx::symbolic
