// The registry: ranges of one op never overlap, lookup follows the ranges, in-place ops fall back
// to their out-of-place converter.
#include <gtest/gtest.h>

#include "symbolic/registry.h"

namespace torchonnx::symbolic {
namespace {

TEST(Registry, BuiltinRangesAreValidAndDisjoint) {
  const auto& entries = Registry::builtin().entries();
  EXPECT_GT(entries.size(), 80u);
  for (const auto& [op, regs] : entries) {
    for (size_t i = 0; i < regs.size(); ++i) {
      EXPECT_LE(kMinOpset, regs[i].range.since) << op;
      EXPECT_LE(regs[i].range.since, regs[i].range.until) << op;
      EXPECT_LE(regs[i].range.until, kMaxOpset) << op;
      for (size_t j = i + 1; j < regs.size(); ++j) {
        EXPECT_TRUE(regs[i].range.until < regs[j].range.since ||
                    regs[j].range.until < regs[i].range.since)
            << op << " has overlapping ranges";
      }
    }
  }
}

TEST(Registry, AddRejectsOverlap) {
  Registry r;
  r.add("aten::foo", {9, 12}, nullptr);
  r.add("aten::foo", {13, 17}, nullptr);
  // Programming errors of the built-in registrations: std::logic_error (no ExportError code),
  // the message naming what is wrong and the op.
  auto expect_logic_error = [&](const std::string& op, OpsetRange range, const std::string& what) {
    try {
      r.add(op, range, nullptr);
      ADD_FAILURE() << "registering " << op << " succeeded; expected '" << what << "'";
    } catch (const std::logic_error& e) {
      EXPECT_EQ(std::string(e.what()), what);
    }
  };
  expect_logic_error("aten::foo", {12, 14}, "overlapping opset ranges registered for aten::foo");
  expect_logic_error("aten::bar", {14, 12}, "empty opset range for aten::bar");
}

TEST(Registry, LookupPicksTheRangeHoldingTheOpset) {
  const Registry& r = Registry::builtin();
  const Converter* old_hardswish = r.find("aten::hardswish", 13);
  const Converter* new_hardswish = r.find("aten::hardswish", 14);
  ASSERT_NE(old_hardswish, nullptr);
  ASSERT_NE(new_hardswish, nullptr);
  EXPECT_NE(old_hardswish, new_hardswish);
  EXPECT_EQ(r.find("aten::hardswish", 8), nullptr);
  EXPECT_EQ(r.find("aten::no_such_op", 17), nullptr);
}

TEST(Registry, InPlaceOpsUseTheOutOfPlaceConverter) {
  const Registry& r = Registry::builtin();
  EXPECT_EQ(r.find_for_node("aten::relu_", 17), r.find("aten::relu", 17));
  EXPECT_EQ(r.find_for_node("aten::__and__", 17), r.find("aten::__and__", 17));
}

}  // namespace
}  // namespace torchonnx::symbolic
