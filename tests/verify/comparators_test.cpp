// src/verify/compare.cpp's comparator on the synthetic cases of comparator_cases.json (issue 38,
// item 2): each case must get the verdict the file gives it, as tools/verify/verify.mjs must on the
// same file (tests/verify/comparators_test.mjs), so that the two comparators agree.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verify/compare.h"

namespace torchonnx::verification {
namespace {

using nlohmann::json;

json load_cases() {
  std::ifstream in(std::string(TORCHONNX_SOURCE_DIR) + "/tests/verify/comparator_cases.json");
  EXPECT_TRUE(in.good()) << "tests/verify/comparator_cases.json not found";
  return json::parse(in, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/false);
}

at::ScalarType dtype(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "float64") return at::kDouble;
  if (name == "int64") return at::kLong;
  if (name == "int32") return at::kInt;
  if (name == "uint8") return at::kByte;
  if (name == "bool") return at::kBool;
  throw std::runtime_error("unknown dtype " + name);
}

double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Inf") return std::numeric_limits<double>::infinity();
    if (s == "-Inf") return -std::numeric_limits<double>::infinity();
    return std::stod(s);
  }
  return v.get<double>();
}

int64_t integer(const json& v) {
  return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
}

// {dtype, shape, data | fill | range, set} as a tensor; int64 values are read as integers (exact
// beyond 2^53), the others as doubles rounded to the dtype (float32 as verify.mjs's Float32Array).
at::Tensor tensor(const json& spec) {
  const at::ScalarType type = dtype(spec.at("dtype"));
  const std::vector<int64_t> shape = spec.at("shape").get<std::vector<int64_t>>();
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const bool exact_int = type == at::kLong;
  std::vector<double> values(n);
  std::vector<int64_t> ints(n);
  auto put = [&](int64_t i, const json& v) {
    if (exact_int) {
      ints[i] = integer(v);
    } else {
      values[i] = number(v);
    }
  };
  if (spec.contains("data")) {
    EXPECT_EQ(static_cast<int64_t>(spec["data"].size()), n);
    for (int64_t i = 0; i < n; ++i) put(i, spec["data"][i]);
  } else if (spec.contains("range")) {
    for (int64_t i = 0; i < n; ++i) {
      put(i,
          spec["range"][0].get<double>() + static_cast<double>(i) * spec["range"][1].get<double>());
    }
  } else {
    for (int64_t i = 0; i < n; ++i) put(i, spec.at("fill"));
  }
  if (spec.contains("set")) {
    for (const auto& s : spec["set"]) put(s[0].get<int64_t>(), s[1]);
  }
  if (exact_int) return at::tensor(ints, at::kLong).reshape(shape);
  return at::tensor(values, at::kDouble).to(type).reshape(shape);
}

VerifyOptions tolerance(const json& t) {
  VerifyOptions v;
  v.rtol = t.at("rtol").get<double>();
  v.atol = t.at("atol").get<double>();
  v.atol_scale = t.at("atol_scale").get<double>();
  v.pixel_atol = t.value("pixel_atol", 0.0);
  v.detections = true;
  return v;
}

// compare.cpp's verdict on a case, and what it said.
bool verdict(const json& c, std::string& said) {
  VerifyOptions v = tolerance(c.at("tolerance"));
  if (c.value("detections", false)) {
    std::vector<at::Tensor> expected, actual;
    for (const auto& spec : c.at("expected")) expected.push_back(tensor(spec));
    for (const auto& spec : c.at("actual")) actual.push_back(tensor(spec));
    std::vector<OutputCheck> checks(expected.size());
    const DetectionMatch m = compare_detections(actual, expected, v, checks);
    said = fmt::format("matched {} of {} ({} needed, {} differing) {}", m.matched, m.count,
                       m.needed, m.differing, m.note);
    return m.pass;
  }
  v.detections = false;
  const OutputCheck check = compare("output", tensor(c.at("actual")), tensor(c.at("expected")), v);
  said = fmt::format("mismatched {} max_abs_error {} {}", check.mismatched, check.max_abs_error,
                     check.note);
  return check.pass;
}

TEST(Comparators, CompareCppGivesEveryCaseItsVerdict) {
  const json cases = load_cases().at("cases");
  int run = 0, not_here = 0;
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    if (c.contains("runners")) {
      const auto& runners = c["runners"];
      if (std::find(runners.begin(), runners.end(), "compare.cpp") == runners.end()) {
        ++not_here;
        continue;
      }
    }
    ++run;
    std::string said;
    const bool pass = verdict(c, said);
    EXPECT_EQ(pass, c.at("pass").get<bool>())
        << "'" << name << "': compare.cpp says " << (pass ? "pass" : "fail") << " (" << said << ")";
  }
  std::cout << "compare.cpp: " << run << " comparator cases run, " << not_here
            << " are verify.mjs's only (the one-step rule of quantized outputs)\n";
  EXPECT_GT(run, 40);
}

}  // namespace
}  // namespace torchonnx::verification
