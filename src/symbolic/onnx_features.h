// Note [ONNX features by opset]
// A lowering that changes with the opset changes because ONNX gained something there: an op
// (GatherElements, 11), an input in place of an attribute (Pad's pads, 11), a dtype (Clip on
// integers, 12). Converters and builders branch on that feature, named here once with the ONNX op
// version that brought it — `g.has(OnnxFeature::kGatherElements)` — not on an opset number: the
// reason for the branch is in its name, each fact is stated once, and a test (api/registry_test)
// checks every one against the onnx library's operator schemas (the op has a version of its own
// at exactly that opset). An op that cannot be converted at all below some opset is a matter of
// its registration range (registry.h) or of GraphContext::require_opset, not of this table.
#pragma once

#include <cstddef>

namespace torchonnx::symbolic {

enum class OnnxFeature {
  kSliceInputs,             // Slice-10: starts, ends, axes (and steps) as inputs
  kPoolCeilMode,            // MaxPool-10, AveragePool-10: the ceil_mode attribute
  kResize,                  // Resize-10 (Upsample before)
  kGatherNegativeIndices,   // Gather-11: negative indices count from the end
  kGatherElements,          // GatherElements-11
  kPadInputs,               // Pad-11: pads and the constant value as inputs
  kIfBranchShapes,          // If-11: branches whose outputs differ in shape
  kEqualOfAnyType,          // Equal-11: floats (and every numeric type), not only bool/int32/int64
  kBitShift,                // BitShift-11
  kRound,                   // Round-11
  kSequences,               // SplitToSequence-11 and the other sequence ops
  kRange,                   // Range-11
  kResizeSizes,             // Resize-11: roi, scales or sizes, and float scales of any dtype
  kClipInputs,              // Clip-11: min and max as inputs
  kClipIntegers,            // Clip-12: integer tensors
  kOrEqualComparisons,      // LessOrEqual-12, GreaterOrEqual-12
  kMaxMinIntegers,          // Max-12, Min-12: integer tensors
  kReduceMaxMin8Bit,        // ReduceMax-12, ReduceMin-12: uint8 and int8
  kNegativeLogLikelihood,   // NegativeLogLikelihoodLoss-12
  kPerChannelQuantization,  // DequantizeLinear-13: per-axis scales and zero points
  kResizeOptionalInputs,    // Resize-13: roi and scales may be omitted
  kLoopSequences,           // Loop-13: sequences as loop-carried values
  kLogSoftmaxAnyAxis,       // LogSoftmax-13: along one axis (before, the input flattened at it)
  kSqueezeAxesInput,        // Squeeze-13: axes as an input
  kReduceMaxMinBFloat16,    // ReduceMax-13, ReduceMin-13: bfloat16
  kIdentityOfSequences,     // Identity-14: sequences
  kReshapeAllowZero,        // Reshape-14: allowzero (a 0 is a size)
  kArithmeticOf8And16Bit,   // Add-14, Sub, Mul, Div: uint8, int8, int16
  kScatterAdd,              // ScatterElements-16: reduction "add" and "mul"
  kLayerNormalization,      // LayerNormalization-17
  kScatterMaxMin,           // ScatterElements-18: reduction "max" and "min"
  kDftAxisInput,            // DFT-20: the axis as an input
};

struct OnnxFeatureInfo {
  OnnxFeature feature;
  const char* op;  // an ONNX op (default domain) whose version `opset` brought the feature
  int opset;
};

// Every feature, in the order of the enum.
const OnnxFeatureInfo* onnx_features(size_t* count);
// The opset that brought `feature`.
int onnx_feature_opset(OnnxFeature feature);

}  // namespace torchonnx::symbolic
