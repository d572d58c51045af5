#include "frontend/archive_check.h"

#include <torch/csrc/jit/frontend/lexer.h>
#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/tree_views.h>

#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "torchonnx/errors.h"

namespace torchonnx::frontend {

namespace {

// --- The zip's central directory: the uncompressed size of every record ----------------------
// The sizes miniz (PyTorchStreamReader) allocates for the records, keyed as the reader names
// records (without the archive's top folder).

uint64_t le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

// `stored`, when given, gets the records that are stored uncompressed (zip method 0).
std::optional<std::map<std::string, uint64_t>> record_sizes(
    uint64_t file_size, const ReadAt& read_at, std::set<std::string>* stored = nullptr) {
  const auto entries = zip_directory(file_size, read_at);
  if (!entries) return std::nullopt;
  std::map<std::string, uint64_t> sizes;
  std::string prefix;  // the reader's archive folder: that of the first entry
  for (size_t e = 0; e < entries->size(); ++e) {
    const ZipEntry& entry = (*entries)[e];
    const std::string& name = entry.name;
    if (e == 0) prefix = name.substr(0, name.find('/')) + "/";
    // Only records in that folder are read; two of one name would leave open which one is.
    if (name.compare(0, prefix.size(), prefix) == 0 &&
        !sizes.emplace(name.substr(prefix.size()), entry.size).second) {
      return std::nullopt;
    }
    if (stored != nullptr && entry.method == 0) stored->insert(name.substr(prefix.size()));
  }
  return sizes;
}

}  // namespace

std::optional<std::vector<ZipEntry>> zip_directory(uint64_t file_size, const ReadAt& read_at) {
  constexpr uint64_t kEocd = 22, kMaxComment = 65535;
  if (file_size < kEocd) return std::nullopt;
  const uint64_t tail_start = file_size > kEocd + kMaxComment ? file_size - kEocd - kMaxComment : 0;
  const std::string tail = read_at(tail_start, file_size - tail_start);
  size_t eocd = std::string::npos;
  for (size_t i = tail.size() - kEocd + 1; i-- > 0;) {
    if (le(tail, i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) return std::nullopt;
  uint64_t entries = le(tail, eocd + 10, 2), cd_size = le(tail, eocd + 12, 4),
           cd_offset = le(tail, eocd + 16, 4);
  if (entries == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {  // zip64
    if (eocd < 20 || le(tail, eocd - 20, 4) != 0x07064b50) return std::nullopt;
    const uint64_t z64 = le(tail, eocd - 20 + 8, 8);
    if (z64 > file_size || file_size - z64 < 56) return std::nullopt;
    const std::string rec = read_at(z64, 56);
    if (rec.size() != 56 || le(rec, 0, 4) != 0x06064b50) return std::nullopt;
    entries = le(rec, 32, 8);
    cd_size = le(rec, 40, 8);
    cd_offset = le(rec, 48, 8);
  }
  if (cd_offset > file_size || cd_size > file_size - cd_offset) return std::nullopt;
  const std::string cd = read_at(cd_offset, cd_size);
  std::vector<ZipEntry> out;
  size_t at = 0;
  for (uint64_t e = 0; e < entries; ++e) {
    if (cd.size() - at < 46 || le(cd, at, 4) != 0x02014b50) return std::nullopt;
    ZipEntry entry;
    entry.method = static_cast<int>(le(cd, at + 10, 2));
    entry.compressed_size = le(cd, at + 20, 4);
    entry.size = le(cd, at + 24, 4);
    entry.header_offset = le(cd, at + 42, 4);
    const size_t name_len = le(cd, at + 28, 2), extra_len = le(cd, at + 30, 2),
                 comment_len = le(cd, at + 32, 2);
    if (cd.size() - at - 46 < name_len + extra_len + comment_len) return std::nullopt;
    entry.name = cd.substr(at + 46, name_len);
    // The zip64 extra field holds, in this order, the values whose 32-bit fields are all ones.
    std::vector<uint64_t*> wide;
    for (uint64_t* v : {&entry.size, &entry.compressed_size, &entry.header_offset}) {
      if (*v == 0xFFFFFFFF) wide.push_back(v);
    }
    if (!wide.empty()) {
      bool found = false;
      for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
        const size_t len = le(cd, x + 2, 2);
        if (le(cd, x, 2) == 0x0001 && len >= 8 * wide.size() && x + 4 + len <= cd.size()) {
          for (size_t k = 0; k < wide.size(); ++k) *wide[k] = le(cd, x + 4 + 8 * k, 8);
          found = true;
          break;
        }
        x += 4 + len;
      }
      if (!found) return std::nullopt;
    }
    out.push_back(std::move(entry));
    at += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

namespace {

// --- A pickle, walked as libtorch 1.13's Unpickler would -------------------------------------
// Values are modelled by kind (and the few contents the checks need); the checks are those the
// unpickler lacks: stack and mark bounds, memo indices, the shapes of the arguments of the
// globals whose code casts them unchecked, and tensor storages against their records.

struct Value;
using ValuePtr = std::shared_ptr<Value>;
struct Value {
  enum Kind {
    kInt,
    kFloat,
    kBool,
    kNone,
    kStr,
    kTuple,
    kList,
    kDict,
    kGlobal,
    kScalarType,
    kTensor,
    kOther
  };
  Kind kind = kOther;
  int64_t number = 0;           // kInt; the element size of a kScalarType; kList: 1 if typed
  std::string text;             // kStr; kGlobal: "module.name"
  std::vector<ValuePtr> items;  // kTuple; kList: its ints (no cycles)
  bool only_ints = true;        // kList: holds nothing but ints
  size_t text_at = 0;           // kStr: where its bytes are in the pickle
  int gets = 0;                 // how often the memo gave it back (BINGET)
};

ValuePtr make(Value::Kind kind, int64_t number = 0, std::string text = {},
              std::vector<ValuePtr> items = {}) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  v->number = number;
  v->text = std::move(text);
  v->items = std::move(items);
  return v;
}

// Element sizes of torch.<Name>Storage (the unpickler's scalar types).
std::optional<int64_t> storage_element_size(const std::string& name) {
  static const std::map<std::string, int64_t> kSizes = {
      {"ByteStorage", 1},         {"CharStorage", 1},           {"ShortStorage", 2},
      {"IntStorage", 4},          {"LongStorage", 8},           {"HalfStorage", 2},
      {"FloatStorage", 4},        {"DoubleStorage", 8},         {"ComplexHalfStorage", 4},
      {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16}, {"BoolStorage", 1},
      {"BFloat16Storage", 2},     {"QInt8Storage", 1},          {"QUInt8Storage", 1},
      {"QInt32Storage", 4},       {"QUInt4x2Storage", 1},       {"QUInt2x4Storage", 1}};
  auto it = kSizes.find(name);
  if (it == kSizes.end()) return std::nullopt;
  return it->second;
}

class PickleChecker {
 public:
  // `tensor_dir`: where BINPERSID finds its records ("data/" for data.pkl); empty: no tensors.
  // `sizes`: the records' sizes, against which storages are checked; null: the loader never reads
  // this pickle's tensor data (see Note [Pickles the loader reads]).
  PickleChecker(const std::string& bytes, std::string tensor_dir,
                const std::map<std::string, uint64_t>* sizes)
      : in_(bytes), tensor_dir_(std::move(tensor_dir)), sizes_(sizes) {}

  // The value the pickle builds (after run() succeeded).
  const ValuePtr& result() const { return result_; }

  // The storages the pickle references (BINPERSID), in order; `key` is shared when the memo gave
  // its string back elsewhere too (after run() succeeded).
  std::vector<PickledStorage> storages() const {
    std::vector<PickledStorage> out;
    for (const auto& [key, element_size, numel] : storages_) {
      out.push_back({key->text, key->text_at, key->gets > 0, element_size, numel});
    }
    return out;
  }

  // An empty string when the pickle is safe for the unpickler, else what is wrong.
  std::string run() {
    try {
      if (byte() != 0x80 || byte() != 2) return "no pickle protocol 2 header";
      while (true) {
        op_at_ = pos_;
        if (!step()) return {};
      }
    } catch (const std::string& why) {
      return fmt::format("{} (opcode at byte {})", why, op_at_);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) { throw why; }

  uint64_t read(size_t n) {
    if (in_.size() - pos_ < n) fail("truncated");
    uint64_t v = le(in_, pos_, static_cast<int>(n));
    pos_ += n;
    return v;
  }
  unsigned char byte() { return static_cast<unsigned char>(read(1)); }
  std::string bytes(size_t n) {
    if (in_.size() - pos_ < n) fail("truncated");
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string line() {
    const size_t end = in_.find('\n', pos_);
    if (end == std::string::npos) fail("truncated GLOBAL");
    std::string s = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }

  // Items above the innermost mark.
  size_t available() const { return stack_.size() - (marks_.empty() ? 0 : marks_.back()); }
  void need(size_t n, const char* op) {
    if (available() < n) fail(fmt::format("{} needs {} stack items, has {}", op, n, available()));
  }
  ValuePtr pop() {
    ValuePtr v = stack_.back();
    stack_.pop_back();
    return v;
  }
  void push(ValuePtr v) { stack_.push_back(std::move(v)); }
  // The items above the innermost mark, removed with the mark.
  std::vector<ValuePtr> pop_mark(const char* op) {
    if (marks_.empty()) fail(fmt::format("{} without MARK", op));
    const size_t start = marks_.back();
    marks_.pop_back();
    std::vector<ValuePtr> items(stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
    stack_.resize(start);
    return items;
  }
  void memo_put(uint64_t id) {
    if (stack_.empty()) fail("PUT on an empty stack");
    if (id > memo_.size()) fail("memo index out of order");
    if (id == memo_.size())
      memo_.push_back(stack_.back());
    else
      memo_[id] = stack_.back();
  }
  void memo_get(uint64_t id) {
    if (id >= memo_.size()) fail("memo index out of range");
    ++memo_[id]->gets;
    push(memo_[id]);
  }
  static bool is(const ValuePtr& v, Value::Kind kind) { return v->kind == kind; }
  // Lists keep their ints only, so that values never form cycles.
  static void append(Value& list, ValuePtr item) {
    if (is(item, Value::kInt))
      list.items.push_back(std::move(item));
    else
      list.only_ints = false;
  }
  static bool tuple_with(const ValuePtr& v, size_t n) {
    return v->kind == Value::kTuple && v->items.size() >= n;
  }

  // GLOBAL module name: what the unpickler pushes.
  ValuePtr global(const std::string& module, const std::string& name) {
    if (module == "torch") {
      if (auto size = storage_element_size(name)) return make(Value::kScalarType, *size);
      return make(Value::kInt);  // a QScheme (the unpickler refuses other torch globals)
    }
    if (module == "torch.distributed.rpc") fail("RRef in a model file");
    return make(Value::kGlobal, 0, module + "." + name);
  }

  // REDUCE/BUILD: the global called on `arg`; what it leaves on the stack.
  ValuePtr call(const ValuePtr& fn, const ValuePtr& arg) {
    if (!is(fn, Value::kGlobal)) fail("REDUCE of something that is not a GLOBAL");
    const std::string& f = fn->text;
    if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_qtensor") {
      // sizes and strides are read as tuples unchecked; qtensor's quantizer parameters too
      const bool q = f == "torch._utils._rebuild_qtensor";
      if (!tuple_with(arg, q ? 5 : 4) || !is(arg->items[2], Value::kTuple) ||
          !is(arg->items[3], Value::kTuple) || (q && !is(arg->items[4], Value::kTuple))) {
        fail(f + " with malformed arguments");
      }
      return make(Value::kTensor);
    }
    if (f == "torch._utils._rebuild_sparse_tensor") {
      if (!tuple_with(arg, 2) || !is(arg->items[1], Value::kTuple)) fail(f + " malformed");
      return make(Value::kTensor);
    }
    if (f == "torch.jit._pickle.build_tensor_from_id" || f == "torch.device") {
      if (!tuple_with(arg, 1)) fail(f + " with malformed arguments");
      return make(f == "torch.device" ? Value::kOther : Value::kTensor);
    }
    if (f == "torch.jit._pickle.build_intlist" || f == "torch.jit._pickle.build_tensorlist" ||
        f == "torch.jit._pickle.build_doublelist" || f == "torch.jit._pickle.build_boollist") {
      if (!tuple_with(arg, 1) || !is(arg->items[0], Value::kList)) fail(f + " malformed");
      if (f == "torch.jit._pickle.build_intlist") {
        if (!arg->items[0]->only_ints) fail(f + " of something that is not an int");
        return make(Value::kList, /*typed=*/1, {}, arg->items[0]->items);
      }
      return make(Value::kList, /*typed=*/1);
    }
    if (f == "torch.jit._pickle.restore_type_tag") {
      if (!tuple_with(arg, 2)) fail(f + " with malformed arguments");
      return arg->items[0];
    }
    if (f == "collections.OrderedDict") return make(Value::kNone);
    if (f == "__main__.IntList") return arg;
    return make(Value::kOther);  // classes and enums: libtorch checks what they take
  }

  // BINPERSID ("storage", scalar type, key, device, numel): the storage's bytes must be in the
  // record data/<key>, since the unpickler sizes the storage from numel alone.
  ValuePtr persistent(const ValuePtr& id) {
    if (!tuple_with(id, 5) || !is(id->items[0], Value::kStr) ||
        !is(id->items[1], Value::kScalarType) || !is(id->items[2], Value::kStr) ||
        !is(id->items[3], Value::kStr) || !is(id->items[4], Value::kInt)) {
      fail("malformed tensor storage reference");
    }
    if (tensor_dir_.empty()) fail("tensor storage in a pickle without tensors");
    const int64_t numel = id->items[4]->number, element = id->items[1]->number;
    if (numel < 0 || numel > (int64_t{1} << 56) / element) fail("absurd storage size");
    if (numel > 0 && sizes_ != nullptr) {
      const std::string record = tensor_dir_ + id->items[2]->text;
      auto it = sizes_->find(record);
      if (it == sizes_->end()) fail("storage record '" + record + "' is missing");
      if (it->second < static_cast<uint64_t>(numel * element)) {
        fail(fmt::format("storage '{}' claims {} bytes but its record has {}", record,
                         numel * element, it->second));
      }
    }
    storages_.emplace_back(id->items[2], element, numel);
    return make(Value::kTensor);
  }

  // One opcode; false at STOP.
  bool step() {
    const unsigned char op = byte();
    switch (op) {
      case '.':  // STOP
        if (!stack_.empty()) result_ = stack_.back();
        return false;
      case ']':  // EMPTY_LIST
        push(make(Value::kList));
        break;
      case ')':  // EMPTY_TUPLE
        push(make(Value::kTuple));
        break;
      case '}':  // EMPTY_DICT
        push(make(Value::kDict));
        break;
      case 'q':  // BINPUT
        memo_put(read(1));
        break;
      case 'r':  // LONG_BINPUT
        memo_put(read(4));
        break;
      case 'h':  // BINGET
        memo_get(read(1));
        break;
      case 'j':  // LONG_BINGET
        memo_get(read(4));
        break;
      case '(':  // MARK
        marks_.push_back(stack_.size());
        break;
      case 0x88:  // NEWTRUE
      case 0x89:  // NEWFALSE
        push(make(Value::kBool));
        break;
      case 'N':  // NONE
        push(make(Value::kNone));
        break;
      case 'K':  // BININT1
        push(make(Value::kInt, static_cast<int64_t>(read(1))));
        break;
      case 'M':  // BININT2
        push(make(Value::kInt, static_cast<int64_t>(read(2))));
        break;
      case 'J':  // BININT
        push(make(Value::kInt, static_cast<int32_t>(read(4))));
        break;
      case 0x8a: {  // LONG1: the unpickler reads only 8-byte ones
        if (byte() != 8) fail("LONG1 of other than 8 bytes");
        push(make(Value::kInt, static_cast<int64_t>(read(8))));
        break;
      }
      case 'X': {  // BINUNICODE
        const uint64_t n = read(4);
        const size_t text_at = pos_;
        push(make(Value::kStr, 0, bytes(n)));
        stack_.back()->text_at = text_at;
        break;
      }
      case 'G':  // BINFLOAT
        read(8);
        push(make(Value::kFloat));
        break;
      case 't':  // TUPLE
        push(make(Value::kTuple, 0, {}, pop_mark("TUPLE")));
        break;
      case 0x85:    // TUPLE1
      case 0x86:    // TUPLE2
      case 0x87: {  // TUPLE3
        const size_t n = op - 0x84;
        need(n, "TUPLEn");
        std::vector<ValuePtr> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        push(make(Value::kTuple, 0, {}, std::move(items)));
        break;
      }
      case 'e': {  // APPENDS: onto the list below the mark
        if (marks_.empty() || marks_.back() == 0) fail("APPENDS without a list");
        ValuePtr list = stack_[marks_.back() - 1];
        if (!is(list, Value::kList)) fail("APPENDS to a non-list");
        for (auto& item : pop_mark("APPENDS")) append(*list, std::move(item));
        break;
      }
      case 'l': {  // LIST
        ValuePtr list = make(Value::kList);
        for (auto& item : pop_mark("LIST")) append(*list, std::move(item));
        push(std::move(list));
        break;
      }
      case 'd': {  // DICT
        if (pop_mark("DICT").size() % 2 != 0) fail("DICT of an odd number of items");
        push(make(Value::kDict));
        break;
      }
      case 'u': {  // SETITEMS: into the dict below the mark
        if (marks_.empty() || marks_.back() == 0) fail("SETITEMS without a dict");
        if (!is(stack_[marks_.back() - 1], Value::kDict)) fail("SETITEMS to a non-dict");
        if (pop_mark("SETITEMS").size() % 2 != 0) fail("SETITEMS of an odd number of items");
        break;
      }
      case 's': {  // SETITEM
        need(3, "SETITEM");
        if (!is(stack_[stack_.size() - 3], Value::kDict)) fail("SETITEM to a non-dict");
        stack_.resize(stack_.size() - 2);
        break;
      }
      case 'c': {  // GLOBAL
        std::string module = line();
        std::string name = line();
        push(global(module, name));
        break;
      }
      case 0x81:  // NEWOBJ: the unpickler drops the argument tuple
        need(1, "NEWOBJ");
        pop();
        break;
      case 'b':    // BUILD (the same as REDUCE in this unpickler)
      case 'R': {  // REDUCE
        need(2, "REDUCE");
        ValuePtr arg = pop();
        ValuePtr fn = pop();
        push(call(fn, arg));
        break;
      }
      case 'Q': {  // BINPERSID
        need(1, "BINPERSID");
        push(persistent(pop()));
        break;
      }
      default:
        fail(fmt::format("opcode 0x{:02x} that TorchScript archives do not use", op));
    }
    return true;
  }

  const std::string& in_;
  size_t pos_ = 0, op_at_ = 0;
  std::string tensor_dir_;
  const std::map<std::string, uint64_t>* sizes_;
  std::vector<ValuePtr> stack_, memo_;
  std::vector<std::tuple<ValuePtr, int64_t, int64_t>> storages_;  // key, element size, numel
  ValuePtr result_;
  std::vector<size_t> marks_;
};

// Note [Source ranges read in a noexcept function]: libtorch 1.13 unpickles a code record's
// .debug_pkl lazily, when an error message needs the source range that generated a piece of the
// code: inside torch::jit::ErrorReport::what(), which is noexcept. Any exception there (a wrong
// type in the pickle, an assertion) is std::terminate. So the ranges are checked here, against
// what SourceRangeDeserializer reads unchecked: the record tuples, the text-table indices, and the
// text. A text of the string-table format is a list of pieces (one per line, as the serializer
// splits it); StringCordView's iterator asserts when it steps onto an empty piece, so every
// piece but the last must end its line. A range must start inside its text (the highlighter reads
// the text backwards from there); its end may pass the text's end (it is clamped).
bool is_a(const ValuePtr& v, Value::Kind kind) {
  return v && v->kind == kind;
}

// The length of a source's text, or what is wrong with the source (Note [Source ranges read in a
// noexcept function]). `table`: the string table, or null for the older format.
std::variant<uint64_t, std::string> source_text_size(const Value& source,
                                                     const std::vector<ValuePtr>* table) {
  if (!is_a(source.items[2], Value::kInt)) return "a source's starting line is not an int";
  if (!table) {
    if (!is_a(source.items[0], Value::kStr) ||
        !(is_a(source.items[1], Value::kStr) || is_a(source.items[1], Value::kNone))) {
      return "a source is not (text, file name, line)";
    }
    return uint64_t{source.items[0]->text.size()};
  }
  const ValuePtr& pieces = source.items[0];
  if (!is_a(pieces, Value::kList) || pieces->number != 1 || !pieces->only_ints ||
      !is_a(source.items[1], Value::kInt)) {
    return "a source is not (text indices, file name index, line)";
  }
  auto in_table = [&](int64_t i) { return i >= 0 && static_cast<uint64_t>(i) < table->size(); };
  if (!in_table(source.items[1]->number)) return "a file name index is out of range";
  uint64_t size = 0;
  for (size_t k = 0; k < pieces->items.size(); ++k) {
    const int64_t i = pieces->items[k]->number;
    if (!in_table(i)) return "a text index is out of range";
    const std::string& piece = (*table)[static_cast<size_t>(i)]->text;
    if (k + 1 < pieces->items.size() && (piece.empty() || piece.back() != '\n'))
      return "a line of a source text does not end with a newline";
    size += piece.size();
  }
  return size;
}

// An empty string when a .debug_pkl's value is safe for libtorch, else what is wrong.
std::string check_source_ranges(const ValuePtr& root) {
  if (!is_a(root, Value::kTuple) || root->items.empty()) return "it is not a tuple of records";
  const std::vector<ValuePtr>* table = nullptr;
  ValuePtr records = root;
  if (is_a(root->items[0], Value::kStr) && root->items[0]->text == "FORMAT_WITH_STRING_TABLE") {
    if (root->items.size() < 3 || !is_a(root->items[1], Value::kTuple) ||
        !is_a(root->items[2], Value::kTuple)) {
      return "its string table is malformed";
    }
    for (const auto& text : root->items[1]->items)
      if (!is_a(text, Value::kStr)) return "its string table holds something that is not a string";
    // With an empty table, libtorch reads the sources in the older format.
    if (!root->items[1]->items.empty()) table = &root->items[1]->items;
    records = root->items[2];
  }
  auto tuple_of = [](const ValuePtr& v, size_t n) {
    return is_a(v, Value::kTuple) && v->items.size() == n;
  };
  std::map<const Value*, uint64_t> text_sizes;  // records share (memoize) their sources
  for (const auto& record : records->items) {
    if (!is_a(record, Value::kTuple) || record->items.size() < 2 ||
        !is_a(record->items[0], Value::kInt)) {
      return "a record is not (byte offset, source range, ...)";
    }
    const ValuePtr& range = record->items[1];
    if (!tuple_of(range, 3) || !tuple_of(range->items[0], 3) ||
        !is_a(range->items[1], Value::kInt) || !is_a(range->items[2], Value::kInt)) {
      return "a source range is not (source, start, end)";
    }
    const Value* source = range->items[0].get();
    auto known = text_sizes.find(source);
    if (known == text_sizes.end()) {
      auto size = source_text_size(*source, table);
      if (auto* why = std::get_if<std::string>(&size)) return *why;
      known = text_sizes.emplace(source, std::get<uint64_t>(size)).first;
    }
    const int64_t start = range->items[1]->number, end = range->items[2]->number;
    if (start < 0 || static_cast<uint64_t>(start) > known->second || end < start) {
      return fmt::format("source range {}-{} is outside its text of {} bytes", start, end,
                         known->second);
    }
  }
  return {};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Note [Code the importer cannot parse]: libtorch 1.13's importer parses each code/**.py record
// (SourceImporterImpl::parseSourceIfNeeded) with the source ranges of its .debug_pkl record
// attached, and when the code does not parse, its error message follows those ranges, which a
// corrupt file sends out of bounds (Source::findSourceRangeThatGenerated). The code is parsed here
// first, the same way but without debug ranges: code that does not parse is refused with our
// parser's message. And the importer takes every class-body assignment `name = value` whose name
// is not one of its special ones for a class constant and reads its type annotation without
// checking there is one (ScriptTypeParser::parseClassConstant): torch.jit.save writes every
// constant with its type (`x : Final[int] = 3`), so one without is refused too.
std::string check_code(const std::string& text, const std::string& name) {
  using namespace torch::jit;
  static const std::set<std::string> kSpecial = {"__parameters__", "__buffers__",
                                                 "__forward_pre_hooks__", "__forward_hooks__"};
  try {
    Parser p(std::make_shared<Source>(text, name, 0));
    Lexer& L = p.lexer();
    if (L.cur().kind == TK_IDENT && L.cur().text() == "op_version_set") {
      L.next();
      L.expect('=');
      L.expect(TK_NUMBER);
      L.expect(TK_NEWLINE);
    }
    while (L.cur().kind != TK_EOF) {
      while (L.nextIf(TK_IMPORT)) {
        while (L.cur().kind != TK_NEWLINE) L.next();
        L.expect(TK_NEWLINE);
      }
      if (L.cur().kind == TK_DEF) {
        p.parseFunction(/*is_method=*/false);
        continue;
      }
      if (L.cur().kind != TK_CLASS_DEF) {
        return "unexpected token '" + L.cur().text() + "' at the top level";
      }
      const ClassDef class_def(p.parseClass());
      for (const auto& statement : class_def.body()) {
        if (statement.kind() != TK_ASSIGN) continue;
        const Assign assign(statement);
        if (assign.lhs().kind() != TK_VAR || assign.type().present()) continue;
        const std::string var = Var(assign.lhs()).name().name();
        if (!kSpecial.count(var)) {
          return fmt::format("class {} assigns '{}' without a type annotation",
                             class_def.name().name(), var);
        }
      }
    }
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const size_t start = std::min(what.find_first_not_of("\n "), what.size());
    return "it does not parse: " + what.substr(start, what.find('\n', start) - start);
  }
  return {};
}

void check_archive(caffe2::serialize::PyTorchStreamReader& reader, uint64_t file_size,
                   const ReadAt& read_at, const std::string& what,
                   ArchiveLayout* layout = nullptr) {
  auto corrupt = [&](const std::string& why) {
    throw ExportError(ErrorCode::kModelLoad,
                      fmt::format("cannot load {} as TorchScript: {}\nThe file is corrupt or was "
                                  "not written by torch.jit.save(): save the model again.",
                                  what, why));
  };
  const auto sizes =
      record_sizes(file_size, read_at, layout != nullptr ? &layout->stored : nullptr);
  if (!sizes) corrupt("its zip central directory is unreadable");
  if (layout != nullptr) layout->sizes = *sizes;
  // The records as the central directory lists them (the reader's getAllRecords throws on an
  // entry outside the archive folder, which torch::jit::load ignores).
  for (const auto& [name, record_size] : *sizes) {
    if (ends_with(name, ".py") && name.rfind("code/", 0) == 0) {
      std::string text;
      try {
        auto [data, size] = reader.getRecord(name);
        text.assign(static_cast<const char*>(data.get()), size);
      } catch (const std::exception&) {
        continue;
      }
      const std::string why = check_code(text, name);
      if (!why.empty())
        corrupt(fmt::format("record '{}' is not TorchScript's code: {}", name, why));
      continue;
    }
    if (!ends_with(name, ".pkl") && !ends_with(name, ".debug_pkl")) continue;
    // The unpickler reads the tensors of X.pkl from the records X/<key> (data/0, constants/0).
    const std::string dir = ends_with(name, ".pkl") && name.find('/') == std::string::npos
                                ? name.substr(0, name.size() - 4) + "/"
                                : "";
    std::string bytes;
    try {
      auto [data, size] = reader.getRecord(name);
      bytes.assign(static_cast<const char*>(data.get()), size);
    } catch (const std::exception&) {
      // An unreadable record (bad CRC, say) fails libtorch's reader the same way: never unpickled.
      continue;
    }
    // Note [Pickles the loader reads]
    // torch::jit::load unpickles data.pkl and constants.pkl with their tensors' records, and the
    // code's .debug_pkl files. torch >= 2.0 also writes traced_inputs.pkl for traced modules:
    // the example inputs' shapes, written with skip_tensor_data, so every storage it references
    // is an empty record. libtorch reads it only when asked to restore shapes (never by
    // torch::jit::load's default, which we call), and 1.13 does not know it. So such a pickle is
    // walked for its structure, but its storages are not held against their records: a file
    // PyTorch wrote is never refused for them.
    const bool reads_tensor_data = name == "data.pkl" || name == "constants.pkl";
    PickleChecker checker(bytes, dir, reads_tensor_data ? &*sizes : nullptr);
    const std::string why = checker.run();
    if (!why.empty()) corrupt(fmt::format("record '{}' is a malformed pickle: {}", name, why));
    if (layout != nullptr && reads_tensor_data) {
      (name == "data.pkl" ? layout->data : layout->constants) = checker.storages();
    }
    if (ends_with(name, ".debug_pkl")) {
      // See Note [Source ranges read in a noexcept function].
      const std::string bad_range = check_source_ranges(checker.result());
      if (!bad_range.empty())
        corrupt(fmt::format("record '{}' holds malformed debug information: {}", name, bad_range));
    }
  }
}

// A reader of the archive, or none when it is no archive PyTorchStreamReader reads.
template <typename Make>
std::unique_ptr<caffe2::serialize::PyTorchStreamReader> try_reader(Make&& make) {
  try {
    return make();
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace

void check_archive_bytes(const std::string& bytes, const std::string& what) {
  std::istringstream in(bytes);
  auto reader =
      try_reader([&] { return std::make_unique<caffe2::serialize::PyTorchStreamReader>(&in); });
  if (!reader) return;
  check_archive(
      *reader, bytes.size(),
      [&](uint64_t offset, uint64_t size) { return bytes.substr(offset, size); }, what);
}

void check_archive_file(const std::string& path, const std::string& what, ArchiveLayout* layout) {
  auto reader =
      try_reader([&] { return std::make_unique<caffe2::serialize::PyTorchStreamReader>(path); });
  if (!reader) return;
  std::ifstream file(path, std::ios::binary);
  file.seekg(0, std::ios::end);
  const auto file_size = static_cast<uint64_t>(file.tellg());
  check_archive(
      *reader, file_size,
      [&](uint64_t offset, uint64_t size) {
        std::string out(size, '\0');
        file.clear();
        file.seekg(static_cast<std::streamoff>(offset));
        file.read(out.data(), static_cast<std::streamsize>(size));
        out.resize(static_cast<size_t>(file.gcount()));
        return out;
      },
      what, layout);
}

}  // namespace torchonnx::frontend
