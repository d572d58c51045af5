// The dense maps from values to facts that the type propagation keeps (src/passes/
// propagate_types.cpp and src/passes/type_propagation/).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <utility>
#include <vector>

namespace torchonnx::passes::type_propagation {

using torch::jit::Value;

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

}  // namespace torchonnx::passes::type_propagation
