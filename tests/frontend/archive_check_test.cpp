// frontend::check_archive_bytes/_file on small archives: a module libtorch saved passes; the
// same archive with one record altered (a storage shorter than its pickle says, a record gone, a
// truncated pickle, code that does not parse, a class constant without its type) is refused
// with ExportError(kModelLoad) naming the record and what is wrong with it; bytes that are no zip
// archive are left to torch::jit::load.
#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/module.h>

#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "frontend/archive_check.h"
#include "support/expect_error.h"

namespace torchonnx::testing {
namespace {

// A module with a 4x4 parameter (data.pkl and its storage record data/0) and a class constant.
std::string saved_module() {
  torch::jit::Module m("Net");
  m.register_parameter("w", at::randn({4, 4}), false);
  m.define("def forward(self, x):\n  return torch.matmul(x, self.w)\n");
  std::ostringstream out;
  m.save(out);
  return out.str();
}

// `bytes` with each record passed through `edit` (name, contents → new contents, or nullopt to
// drop the record), written again by PyTorch's own writer.
using Edit = std::function<std::optional<std::string>(const std::string&, const std::string&)>;
std::string rewrite(const std::string& bytes, const Edit& edit) {
  std::istringstream in(bytes);
  caffe2::serialize::PyTorchStreamReader reader(&in);
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
    out.append(static_cast<const char*>(data), size);
    return size;
  });
  for (const auto& name : reader.getAllRecords()) {
    auto [data, size] = reader.getRecord(name);
    auto edited = edit(name, std::string(static_cast<const char*>(data.get()), size));
    if (edited) writer.writeRecord(name, edited->data(), edited->size());
  }
  writer.writeEndOfFile();
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check(const std::string& bytes) {
  frontend::check_archive_bytes(bytes, "'model.pt'");
}

TEST(ArchiveCheck, ASavedModulePasses) {
  const std::string bytes = saved_module();
  EXPECT_NO_THROW(check(bytes));
  // Rewritten without a change, it still passes (the rewriting itself breaks nothing).
  EXPECT_NO_THROW(
      check(rewrite(bytes, [](const std::string&, const std::string& b) { return b; })));
}

TEST(ArchiveCheck, BytesThatAreNoArchiveAreLeftToTheLoader) {
  EXPECT_NO_THROW(check("not a zip file at all"));
  EXPECT_NO_THROW(check(std::string(100, '\0')));
}

TEST(ArchiveCheck, AStorageShorterThanItsPickleSaysIsRefused) {
  const std::string bytes =
      rewrite(saved_module(), [](const std::string& name, const std::string& b) {
        return name == "data/0" ? b.substr(0, 16) : b;
      });
  EXPECT_TRUE(ThrowsExportError(
      [&] { check(bytes); }, ErrorCode::kModelLoad,
      {"cannot load 'model.pt'", "record 'data.pkl' is a malformed pickle",
       "storage 'data/0' claims 64 bytes but its record has 16", "save the model again"}));
}

TEST(ArchiveCheck, AMissingStorageRecordIsRefused) {
  const std::string bytes =
      rewrite(saved_module(),
              [](const std::string& name, const std::string& b) -> std::optional<std::string> {
                if (name == "data/0") return std::nullopt;
                return b;
              });
  EXPECT_TRUE(ThrowsExportError([&] { check(bytes); }, ErrorCode::kModelLoad,
                                {"record 'data.pkl'", "storage record 'data/0' is missing"}));
}

TEST(ArchiveCheck, ATruncatedPickleIsRefused) {
  const std::string bytes =
      rewrite(saved_module(), [](const std::string& name, const std::string& b) {
        return name == "data.pkl" ? b.substr(0, b.size() / 2) : b;
      });
  EXPECT_TRUE(ThrowsExportError([&] { check(bytes); }, ErrorCode::kModelLoad,
                                {"record 'data.pkl' is a malformed pickle"}));
}

TEST(ArchiveCheck, CodeThatDoesNotParseIsRefused) {
  bool edited = false;
  const std::string bytes =
      rewrite(saved_module(), [&](const std::string& name, const std::string& b) {
        if (!ends_with(name, ".py")) return b;
        edited = true;
        return b + "\ndef broken(:\n";
      });
  ASSERT_TRUE(edited) << "no code record in the saved module";
  EXPECT_TRUE(ThrowsExportError([&] { check(bytes); }, ErrorCode::kModelLoad,
                                {"is not TorchScript's code: it does not parse"}));
}

TEST(ArchiveCheck, AClassConstantWithoutItsTypeIsRefused) {
  // torch.jit.save writes `x : Final[int] = 3`; the importer would read a missing annotation.
  bool edited = false;
  const std::string bytes =
      rewrite(saved_module(), [&](const std::string& name, const std::string& b) {
        const auto at = b.find("  def forward");
        if (!ends_with(name, ".py") || at == std::string::npos) return b;
        edited = true;
        return b.substr(0, at) + "  answer = 42\n" + b.substr(at);
      });
  ASSERT_TRUE(edited) << "no forward() in the saved code";
  EXPECT_TRUE(ThrowsExportError([&] { check(bytes); }, ErrorCode::kModelLoad,
                                {"assigns 'answer' without a type annotation"}));
}

TEST(ArchiveCheck, TheFileFormChecksTheSameAsTheBytesForm) {
  const std::string bad =
      rewrite(saved_module(), [](const std::string& name, const std::string& b) {
        return name == "data/0" ? b.substr(0, 16) : b;
      });
  const std::string path = temp_dir("archive_check") + "/bad.pt";
  std::ofstream(path, std::ios::binary) << bad;
  EXPECT_TRUE(ThrowsExportError([&] { frontend::check_archive_file(path, "'bad.pt'"); },
                                ErrorCode::kModelLoad,
                                {"cannot load 'bad.pt'", "claims 64 bytes"}));
  const std::string good = temp_dir("archive_check") + "/good.pt";
  std::ofstream(good, std::ios::binary) << saved_module();
  EXPECT_NO_THROW(frontend::check_archive_file(good, "'good.pt'"));
}

}  // namespace
}  // namespace torchonnx::testing
