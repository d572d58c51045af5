// The table of Note [ONNX features by opset].
#include "symbolic/onnx_features.h"

#include <iterator>

namespace torchonnx::symbolic {

namespace {

using F = OnnxFeature;
constexpr OnnxFeatureInfo kFeatures[] = {
    {F::kSliceInputs, "Slice", 10},
    {F::kPoolCeilMode, "MaxPool", 10},
    {F::kResize, "Resize", 10},
    {F::kGatherNegativeIndices, "Gather", 11},
    {F::kGatherElements, "GatherElements", 11},
    {F::kPadInputs, "Pad", 11},
    {F::kIfBranchShapes, "If", 11},
    {F::kEqualOfAnyType, "Equal", 11},
    {F::kBitShift, "BitShift", 11},
    {F::kRound, "Round", 11},
    {F::kSequences, "SplitToSequence", 11},
    {F::kRange, "Range", 11},
    {F::kResizeSizes, "Resize", 11},
    {F::kClipInputs, "Clip", 11},
    {F::kClipIntegers, "Clip", 12},
    {F::kOrEqualComparisons, "LessOrEqual", 12},
    {F::kMaxMinIntegers, "Max", 12},
    {F::kReduceMaxMin8Bit, "ReduceMax", 12},
    {F::kNegativeLogLikelihood, "NegativeLogLikelihoodLoss", 12},
    {F::kPerChannelQuantization, "DequantizeLinear", 13},
    {F::kResizeOptionalInputs, "Resize", 13},
    {F::kLoopSequences, "Loop", 13},
    {F::kLogSoftmaxAnyAxis, "LogSoftmax", 13},
    {F::kSqueezeAxesInput, "Squeeze", 13},
    {F::kReduceMaxMinBFloat16, "ReduceMax", 13},
    {F::kIdentityOfSequences, "Identity", 14},
    {F::kReshapeAllowZero, "Reshape", 14},
    {F::kArithmeticOf8And16Bit, "Add", 14},
    {F::kScatterAdd, "ScatterElements", 16},
    {F::kLayerNormalization, "LayerNormalization", 17},
    {F::kScatterMaxMin, "ScatterElements", 18},
    {F::kDftAxisInput, "DFT", 20},
};

constexpr bool in_enum_order() {
  for (size_t i = 0; i < std::size(kFeatures); ++i) {
    if (static_cast<size_t>(kFeatures[i].feature) != i) return false;
  }
  return true;
}
static_assert(in_enum_order() && std::size(kFeatures) == static_cast<size_t>(F::kDftAxisInput) + 1,
              "kFeatures lists every OnnxFeature, in the enum's order");

}  // namespace

const OnnxFeatureInfo* onnx_features(size_t* count) {
  *count = std::size(kFeatures);
  return kFeatures;
}

int onnx_feature_opset(OnnxFeature feature) {
  return kFeatures[static_cast<size_t>(feature)].opset;
}

}  // namespace torchonnx::symbolic
