#include "symbolic/factory.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <stdexcept>

#include "symbolic/context.h"

namespace torchonnx::symbolic {

FactoryArgs factory_args(size_t positional, unsigned tail) {
  FactoryArgs f;
  f.positional = positional;
  size_t next = positional;
  if (tail & kGenerator) f.generator = next++;
  if (tail & kNames) f.names = next++;
  if (tail & kDtype) f.dtype = next;
  if (tail & kOut) f.out = next + ((tail & kMemoryFormat) ? 1 : 0);
  return f;
}

namespace {

// Throws when `f` does not describe the schema of `kind.overload` in this libtorch (an overload
// this libtorch lacks is not checked: the tables list both libtorches' overloads).
void check_positions(const std::string& kind, const FactoryOverload& o, const FactoryArgs& f) {
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(kind))) {
    const c10::FunctionSchema& schema = op->schema();
    if (schema.overload_name() != o.name) continue;
    const auto& args = schema.arguments();
    auto named = [&](const std::optional<size_t>& i, const char* name) {
      return !i || (*i < args.size() && args[*i].name() == name && args[*i].kwarg_only());
    };
    const bool positional_ok = f.positional <= args.size() &&
                               (f.positional == 0 || !args[f.positional - 1].kwarg_only()) &&
                               (f.positional == args.size() || args[f.positional].kwarg_only());
    if (!positional_ok || !named(f.generator, "generator") || !named(f.names, "names") ||
        !named(f.dtype, "dtype") || !named(f.out, "out")) {
      throw std::logic_error("factory positions of " + kind + "." + o.name + " do not match " +
                             c10::toString(schema));
    }
  }
}

// The checks every overload shares (Note [Factory overloads]).
void check_keywords(GraphContext& g, const Args& a, const FactoryArgs& f) {
  if (f.names && *f.names < a.size() && !a.is_none(*f.names)) {
    g.fail("named tensors cannot be exported");
  }
  reject_generator(g, a);
  if (f.out && *f.out < a.size()) {
    for (const torch::jit::Use& use : a.jit(*f.out)->uses()) {
      if (use.user != a.node() && use.user->isAfter(a.node())) {
        g.fail(std::string(a.node()->kind().toUnqualString()) +
               " with out= whose out tensor is read afterwards (writing into an existing "
               "tensor) is not supported. Remedy: use the result instead, `t = torch." +
               a.node()->kind().toUnqualString() + "(...)`");
      }
    }
  }
}

}  // namespace

void reject_generator(GraphContext& g, const Args& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    c10::TypePtr type = a.jit(i)->type();
    if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
    if (type->kind() == c10::TypeKind::GeneratorType && !a.is_none(i)) {
      g.fail(
          "an explicit torch.Generator cannot be exported (ONNX random ops take no generator "
          "state); call the op with generator=None");
    }
  }
}

void add_factory(Registry& r, const std::string& kind, OpsetRange range,
                 std::initializer_list<FactoryOverload> overloads, const FactoryConverter& fn) {
  for (const FactoryOverload& o : overloads) {
    const FactoryArgs f = factory_args(o.positional, o.tail);
    check_positions(kind, o, f);
    Converter converter = [f, fn](GraphContext& g, const Args& a) -> Values {
      check_keywords(g, a, f);
      return fn(g, a, f);
    };
    if (*o.name == '\0') {
      r.add_unnamed(kind, range, std::move(converter));
    } else {
      r.add(kind + "." + o.name, range, std::move(converter));
    }
  }
}

at::ScalarType result_dtype(const Args& a, const FactoryArgs& f, at::ScalarType fallback) {
  const at::ScalarType out = a.output_dtype();
  if (f.dtype && *f.dtype < a.size() && !a.is_none(*f.dtype)) {
    // A computed dtype (dtype=x.dtype, unfolded) is the one type propagation gave the output.
    if (!a.is_constant(*f.dtype) && out != at::ScalarType::Undefined) return out;
    return static_cast<at::ScalarType>(a.int_arg(*f.dtype));
  }
  if (out != at::ScalarType::Undefined) return out;
  if (f.out && *f.out < a.size() && a.dtype(*f.out) != at::ScalarType::Undefined) {
    return a.dtype(*f.out);
  }
  return fallback;
}

}  // namespace torchonnx::symbolic
