#!/usr/bin/env bash
# The whole torchvision zoo (issue 9), behind this script rather than in the default test run:
# makes the fixtures of every model (tests/fixtures/make_zoo.py: 106 models, 24 GB of .pt in
# build/zoo_fixtures), exports each, runs it in ONNX Runtime, compares with libtorch, and
# writes the results table to docs/zoo.md. About 25 minutes on 2 cores the first time (10 to make
# the fixtures, 16 to test them).
#   bash scripts/zoo.sh                          # everything
#   bash scripts/zoo.sh swin_t maxvit_t          # some models (docs/zoo.md is not rewritten)
# Run after scripts/setup.sh. Exit status non-zero when a model fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
fixtures=${TORCHONNX_ZOO_DIR:-$root/build/zoo_fixtures}

flock /tmp/torchonnx-build.lock cmake --build build -j "$(nproc)" --target zoo_test torchonnx_cli
/usr/bin/python3 tests/fixtures/make_zoo.py "$fixtures" "$@"

models=all
table=$root/build/zoo-table.md
if [ $# -gt 0 ]; then
  models=$(IFS=,; echo "$*")
  table=$root/build/zoo-table-partial.md
fi
status=0
start=$(date +%s)
TORCHONNX_ZOO_DIR=$fixtures TORCHONNX_ZOO_MODELS=$models TORCHONNX_ZOO_TABLE=$table \
  build/tests/zoo_test --gtest_brief=1 || status=$?
seconds=$(( $(date +%s) - start ))

if [ "$models" = all ]; then
  {
    cat <<EOF
# The torchvision zoo

Every model of torchvision $(/usr/bin/python3 -c 'import torchvision; print(torchvision.__version__)')
except the quantized ones, exported by torchonnx from a \`.pt\` (\`torch.jit.trace\` in eval mode,
random weights from fixed seeds: \`tests/fixtures/make_zoo.py\`), run in ONNX Runtime 1.30 and
compared with libtorch 1.13 on the same input. Written by \`bash scripts/zoo.sh\` on $(date -u +%Y-%m-%d)
in ${seconds} s (2 cores); \`ctest -R zoo\` runs a subset of it in every test run.

- Opset: 17; detection models at 11 (as torchvision documents their export) and 17.
- Inputs: 1x3x224x224 (inception_v3 299x299); video 1x3x8x112x112 (s3d and mvit 16x224x224);
  optical flow two 1x3x128x128 frames; detection one 3x320x320 image (ssd300 300x300) with
  \`min_size\`/\`max_size\` 320 and score thresholds at 0, so that random weights still detect.
- "other size": detection and segmentation models are exported with dynamic image axes and run
  again on another image (detection 240x320, segmentation 192x288) against libtorch on it. The
  detection transform pads 240x320 to 256x320 without scaling it. An image it must scale goes
  through a bilinear Resize whose ONNX Runtime arithmetic differs from libtorch's by ~1e-4
  ((x + 0.5) / (out / in) - 0.5 against (in / out) * (x + 0.5) - 0.5; torch.onnx exports the same
  Resize): at 256x384 this moves boxes by ~0.05 px, enough to swap near-tied detections and to
  flip the one-pixel mask pastes and near-tied keypoint maxima of mask and keypoint R-CNN
  (diagnosed by feeding ONNX Runtime's resized image to libtorch's graph: every row then
  matches).
- Weights: random from fixed seeds, zero-initialized weights (ViT's head) given small random
  values, and the BatchNorm statistics set from a batch of two random inputs, as training would
  (with fresh statistics, activations vanish or explode with depth: S3D's features were exactly
  0 and efficientnet's logits 1e-20, and a comparison would test little beyond the last bias).
- Tolerances (\`make_zoo.py\`, TOLERANCE): rtol 1e-3, and atol 1e-3 times the output's scale
  (its largest |value|, capped at 10x its median |value| as in every test; the error column is
  relative to the model's largest |output|): libtorch's own fp32 result differs from its fp64
  one by up to 4e-4 of that scale (resnet152; inception_v3 3e-5, efficientnet_b0 1e-6), and ONNX Runtime sums in another
  order. Detection: rtol 1e-3, atol 1e-3 for scores and masks, and 1e-3 of the image's larger
  side for boxes and keypoints, which are in pixels (libtorch's own fp32 boxes differ from its
  fp64 ones by 0.03 px median, 0.16 px 95th percentile on retinanet_resnet50_fpn_v2 at 256x384,
  where the transform's bilinear resize amplifies rounding). Outputs are compared as detections
  (\`tools/verify/verify.mjs --detections\`): each expected detection is matched with an actual
  one of the same label, score and box within tolerance, so that near-equal scores may come out
  in another order; masks and keypoints are compared under that matching, and a detection whose
  mask or keypoints differ counts as unmatched (RoiAlign samples at box-relative points and
  keypoints are a heatmap argmax: a box within tolerance may still flip a near-tie); 98% of the
  detections must match.
- max error: the largest absolute error over all outputs and both sizes, divided by the largest
  |output| (detection: in pixels and score units, not divided, and over every matched detection,
  including the up to 2% that differ in a mask or keypoints: keypointrcnn's 37 px is a keypoint
  whose heatmap maximum flipped between near-equal peaks, maskrcnn's 0.85 a mask pasted one pixel
  over). Export time: \`export_model\` in
  the test process, after loading the \`.pt\` (no forward runs during export).

EOF
    cat "$table"
  } > docs/zoo.md.tmp
  mv docs/zoo.md.tmp docs/zoo.md
  echo "wrote docs/zoo.md"
else
  cat "$table"
fi
exit $status
