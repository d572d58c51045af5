// Fuzz target: the command line (the CLI11 app of make_app and finish(), which runs every option
// parser: --opset, --input, --dynamic-axes, --training, --operator-export-type, --custom-opset,
// ...). The input is the argument list, one argument per line. Nothing is exported: a bad command
// line must end in a CLI11 parse error or ExportError(kInvalidArgument).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli.h"
#include "fuzz_util.h"

using namespace torchonnx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = {"torchonnx"};
  size_t start = 0;
  while (start < text.size() && args.size() < 64) {
    const size_t end = std::min(text.find('\n', start), text.size());
    args.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());

  cli::Request request;
  auto app = cli::make_app(request);
  try {
    app->parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {  // also --help and --version (CLI::Success)
    return 0;
  }
  try {
    cli::finish(request);
  } catch (const ExportError& e) {
    fuzz::expect_code(e, ErrorCode::kInvalidArgument);
    return 0;
  }
  if (request.command != cli::Request::Command::kOps) {
    const auto& o = request.options;
    if (o.opset_version < kLowestOpset || o.opset_version > highest_opset()) {
      fuzz::fail("finish", "accepted an opset out of range");
    }
  }
  return 0;
}
