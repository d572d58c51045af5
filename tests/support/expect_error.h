// Assertions for error tests: an error must be the expected one, not just any failure. An
// ExportError must carry the expected ErrorCode and a CLI run must exit with it, and the message
// must hold the test's key words (what is wrong and, where the message gives one, the remedy).
//
//   EXPECT_TRUE(ThrowsExportError([&] { export_model(m, inputs, path, options); },
//                                 ErrorCode::kInvalidArgument, {"'x' is used twice", "Remedy"}));
//   EXPECT_TRUE(CliFails(run_cli("export ..."), ErrorCode::kIo, {"does not exist", "Remedy"}));
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "support/harness.h"
#include "torchonnx/errors.h"

namespace torchonnx::testing {

inline std::string error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "kInvalidArgument (2)";
    case ErrorCode::kModelLoad:
      return "kModelLoad (3)";
    case ErrorCode::kUnsupportedOp:
      return "kUnsupportedOp (4)";
    case ErrorCode::kConversion:
      return "kConversion (5)";
    case ErrorCode::kInvalidOnnx:
      return "kInvalidOnnx (6)";
    case ErrorCode::kIo:
      return "kIo (7)";
    case ErrorCode::kModelRun:
      return "kModelRun (8)";
  }
  return "ErrorCode " + std::to_string(static_cast<int>(code));
}

// The key words of `keywords` that `text` lacks, quoted and comma-separated ("" when none).
inline std::string missing_keywords(const std::string& text,
                                    const std::vector<std::string>& keywords) {
  std::string missing;
  for (const auto& k : keywords) {
    if (text.find(k) == std::string::npos) missing += (missing.empty() ? "'" : ", '") + k + "'";
  }
  return missing;
}

// Success when `text` holds every one of `keywords`.
inline ::testing::AssertionResult HasKeywords(const std::string& text,
                                              const std::vector<std::string>& keywords) {
  const std::string missing = missing_keywords(text, keywords);
  if (missing.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the message lacks " << missing << ":\n" << text;
}

// Success when `e` has `code` and its message every one of `keywords`.
inline ::testing::AssertionResult IsExportError(const ExportError& e, ErrorCode code,
                                                const std::vector<std::string>& keywords) {
  const std::string missing = missing_keywords(e.what(), keywords);
  if (e.code() == code && missing.empty()) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  if (e.code() != code)
    failure << "ExportError " << error_code_name(e.code()) << ", expected " << error_code_name(code)
            << "; ";
  if (!missing.empty()) failure << "the message lacks " << missing << "; ";
  return failure << "the message:\n" << e.what();
}

// Success when `fn` throws an ExportError with `code` whose message holds every one of
// `keywords`; a failure naming what it did instead (returned, or threw another error).
inline ::testing::AssertionResult ThrowsExportError(const std::function<void()>& fn, ErrorCode code,
                                                    const std::vector<std::string>& keywords) {
  try {
    fn();
  } catch (const ExportError& e) {
    return IsExportError(e, code, keywords);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-ExportError, expected an ExportError "
                                         << error_code_name(code) << ": " << e.what();
  }
  return ::testing::AssertionFailure()
         << "did not throw; expected an ExportError " << error_code_name(code);
}

// Success when the CLI run `r` exited with `code` (the CLI's exit code is the ErrorCode) and
// printed every one of `keywords`.
inline ::testing::AssertionResult CliFails(const CliResult& r, ErrorCode code,
                                           const std::vector<std::string>& keywords) {
  const std::string missing = missing_keywords(r.output, keywords);
  if (r.exit_code == static_cast<int>(code) && missing.empty())
    return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  if (r.exit_code != static_cast<int>(code))
    failure << "exit code " << r.exit_code << ", expected " << error_code_name(code) << "; ";
  if (!missing.empty()) failure << "the output lacks " << missing << "; ";
  return failure << "the output:\n" << r.output;
}

}  // namespace torchonnx::testing
