// torchonnx::verify (include/torchonnx/verify.h): the export run in ONNX Runtime against libtorch.
#include "torchonnx/verify.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/module.h>

#include <cmath>

#include "export/training_mode.h"
#include "frontend/frontend.h"
#include "verify/compare.h"
#include "verify/find_mismatch.h"
#ifdef TORCHONNX_HAVE_ONNXRUNTIME
#include "verify/ort_session.h"
#endif

namespace torchonnx {

namespace {

void check_verify_options(const VerifyOptions& v) {
  for (auto [name, value] :
       {std::pair{"rtol", v.rtol}, std::pair{"atol", v.atol}, std::pair{"atol-scale", v.atol_scale},
        std::pair{"pixel-atol", v.pixel_atol}}) {
    if (!std::isfinite(value) || value < 0) {
      throw ExportError(ErrorCode::kInvalidArgument,
                        fmt::format("--{} {}: a tolerance is a finite number >= 0, e.g. --{} {}",
                                    name, value, name,
                                    name == std::string("rtol")         ? "1e-3"
                                    : name == std::string("atol")       ? "1e-5"
                                    : name == std::string("pixel-atol") ? "0.3"
                                                                        : "1e-4"));
    }
  }
  if (v.pixel_atol > 0 && !v.detections) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "--pixel-atol is the tolerance of detection boxes and keypoints. Remedy: add "
                      "--detections (VerifyOptions::detections) for a detection model, or leave "
                      "--pixel-atol out");
  }
}

}  // namespace

#ifndef TORCHONNX_HAVE_ONNXRUNTIME

bool verify_available() {
  return false;
}

VerifyResult verify(const torch::jit::Module&, const std::vector<c10::IValue>&,
                    const ExportOptions& options, const VerifyOptions& verify_options) {
  check_export_options(options);
  check_verify_options(verify_options);
  check_verify_available();
  return {};
}

void check_verify_available() {
  throw ExportError(
      ErrorCode::kInvalidArgument,
      "verify runs the export in ONNX Runtime's C++ API, and this build of torchonnx was made "
      "without it (CMake found no libonnxruntime-dev). Remedy: on Debian 13, `apt-get install "
      "libonnxruntime-dev` (scripts/setup.sh does) and build again; Debian 12 has no package of "
      "it: run the Debian 13 build, `bash scripts/debian13.sh build-debian13/torchonnx verify "
      "...`, or export with --save-test-data DIR and check with `node tools/verify/verify.mjs "
      "MODEL.onnx DIR`");
}

#else

bool verify_available() {
  return true;
}

void check_verify_available() {}

namespace {

using verification::OrtModel;

// `args` with every tensor replaced by fn(tensor, its position among the flattened inputs).
std::vector<c10::IValue> map_tensors(
    const std::vector<c10::IValue>& args,
    const std::function<at::Tensor(const at::Tensor&, size_t)>& fn) {
  size_t index = 0;
  std::vector<c10::IValue> out;
  for (const auto& v : args) {
    if (v.isTensorList()) {
      std::vector<at::Tensor> list;
      for (const at::Tensor& t : v.toTensorVector()) list.push_back(fn(t, index++));
      out.emplace_back(c10::List<at::Tensor>(list));
    } else if (v.isTuple()) {
      std::vector<c10::IValue> elems;
      for (const auto& e : v.toTupleRef().elements()) {
        elems.push_back(e.isTensor() ? c10::IValue(fn(e.toTensor(), index)) : e);
        ++index;
      }
      out.emplace_back(c10::ivalue::Tuple::create(std::move(elems)));
    } else if (v.isTensor()) {
      out.emplace_back(fn(v.toTensor(), index++));
    } else {
      out.push_back(v);
      ++index;
    }
  }
  return out;
}

// A tensor like `t` (dtype, value range) of other sizes.
at::Tensor like(const at::Tensor& t, const std::vector<int64_t>& sizes) {
  auto opts = at::TensorOptions().dtype(t.scalar_type());
  if (at::isFloatingType(t.scalar_type())) return at::randn(sizes, opts);
  if (t.scalar_type() == at::kBool) return at::randint(0, 2, sizes, opts);
  int64_t lo = 0, hi = 9;
  if (t.numel() > 0) {
    lo = t.min().item<int64_t>();
    hi = t.max().item<int64_t>();
  }
  return at::randint(lo, hi + 1, sizes, opts);
}

// The example with every dynamic axis grown: size + 1 (`step` 1) or 2 * size + 1 (`step` 2). Axes
// of one size grow alike, so inputs whose sizes must agree keep agreeing.
std::vector<c10::IValue> grow_dynamic_axes(const std::vector<c10::IValue>& args,
                                           const std::vector<std::string>& input_names,
                                           const DynamicAxes& axes, int step, std::string& label) {
  std::vector<std::string> shapes;
  auto grown = map_tensors(args, [&](const at::Tensor& t, size_t i) {
    auto it = i < input_names.size() ? axes.find(input_names[i]) : axes.end();
    if (it == axes.end()) {
      shapes.push_back(fmt::format("{}", fmt::join(t.sizes(), "x")));
      return t;
    }
    std::vector<int64_t> sizes = t.sizes().vec();
    for (const auto& [axis, _] : it->second) {
      const int64_t a = axis < 0 ? axis + t.dim() : axis;
      if (a < 0 || a >= t.dim()) continue;
      sizes[a] = step == 1 ? sizes[a] + 1 : 2 * sizes[a] + 1;
    }
    shapes.push_back(fmt::format("{}", fmt::join(sizes, "x")));
    return like(t, sizes);
  });
  label = fmt::format("inputs {}", fmt::join(shapes, ", "));
  return grown;
}

InputSetCheck check_set(const torch::jit::Module& model, const OrtModel& ort,
                        const std::string& label, const std::vector<c10::IValue>& args,
                        const VerifyOptions& v, bool is_example) {
  InputSetCheck set;
  set.label = label;
  std::vector<at::Tensor> expected = is_example ? v.expected : std::vector<at::Tensor>{};
  try {
    if (expected.empty()) expected = frontend::run_module(model, args);
  } catch (const ExportError& e) {
    if (is_example) throw;
    set.skipped = fmt::format("libtorch does not run these inputs: {}",
                              std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
    set.pass = true;
    return set;
  }
  std::vector<at::Tensor> actual;
  std::vector<std::string> names;  // one per tensor: a sequence output's elements are "out[i]"
  try {
    actual = ort.run(verification::flatten_args(args), &names);
  } catch (const ExportError& e) {
    if (is_example) throw;
    // libtorch runs them, the export does not: a failure of the export (a size it fixed).
    set.error = e.what();
    set.pass = false;
    return set;
  }
  set.pass = true;
  set.outputs.resize(std::max(actual.size(), expected.size()));
  for (size_t k = 0; k < set.outputs.size(); ++k) {
    set.outputs[k].name = k < names.size() ? names[k] : fmt::format("(libtorch output {})", k);
  }
  std::vector<char> per_detection(set.outputs.size(), 0);
  if (v.detections) {
    set.detections = verification::compare_detections(actual, expected, v, set.outputs);
    for (size_t k : set.detections->outputs) per_detection[k] = 1;
    set.pass = set.detections->pass;
  }
  for (size_t k = 0; k < set.outputs.size(); ++k) {
    OutputCheck& c = set.outputs[k];
    if (k >= actual.size() || k >= expected.size()) {
      c.note = k >= actual.size() ? "libtorch returns it, the ONNX model does not"
                                  : "the ONNX model returns it, libtorch does not";
      c.pass = false;
    } else if (!per_detection[k]) {
      c = verification::compare(c.name, actual[k], expected[k], v);
    }
    set.pass = set.pass && c.pass;
  }
  return set;
}

}  // namespace

VerifyResult verify(const torch::jit::Module& model, const std::vector<c10::IValue>& args,
                    const ExportOptions& options, const VerifyOptions& v) {
  check_export_options(options);
  check_verify_options(v);
  if (!options.export_params && v.onnx_path.empty()) {
    throw ExportError(ErrorCode::kInvalidArgument,
                      "verify runs the exported model, which has no weights with "
                      "--no-export-params (export_params=false). Remedy: verify without it");
  }
  VerifyResult r;
  r.opset = options.opset_version;
  r.rtol = v.rtol;
  r.atol = v.atol;
  r.atol_scale = v.atol_scale;
  const OrtModel ort = v.onnx_path.empty()
                           ? OrtModel::from_bytes(export_model_to_bytes(model, args, options))
                           : OrtModel::from_file(v.onnx_path);
  TrainingModeGuard mode(model_modes(model), options.training);  // libtorch runs as it was exported
  std::vector<std::pair<std::string, std::vector<c10::IValue> > > sets{{"example", args}};
  sets.insert(sets.end(), v.more_inputs.begin(), v.more_inputs.end());
  // Grown inputs are random: a detection model finds detections at score ties and thresholds in
  // noise, whose order and count differ between two correct runtimes (fasterrcnn at opset 21:
  // 79 of 100 matched). Those sets are reported as not compared, with what to give instead.
  bool grown_detections = false;
  if (v.more_inputs.empty() && !options.dynamic_axes.empty()) {
    if (v.detections) {
      grown_detections = true;
    } else {
      for (int step : {1, 2}) {
        std::string label;
        auto grown = grow_dynamic_axes(args, ort.input_names(), options.dynamic_axes, step, label);
        sets.emplace_back(label, std::move(grown));
      }
    }
  }
  r.pass = true;
  const std::vector<c10::IValue>* failing = nullptr;
  for (size_t i = 0; i < sets.size(); ++i) {
    r.input_sets.push_back(check_set(model, ort, sets[i].first, sets[i].second, v, i == 0));
    if (!r.input_sets.back().pass && !failing) failing = &sets[i].second;
    r.pass = r.pass && r.input_sets.back().pass;
  }
  if (grown_detections) {
    InputSetCheck set;
    set.label = "other sizes of the dynamic axes";
    set.pass = true;
    set.skipped =
        "with --detections, inputs grown from the example would be random images, whose "
        "detections sit at score ties; give real inputs of other sizes (test_data_set_* folders "
        "beside --inputs .../test_data_set_0, or VerifyOptions::more_inputs)";
    r.input_sets.push_back(set);
  }
  if (failing && v.find_mismatch) {
    r.mismatch = verification::find_mismatch(model, *failing, options, v, r.mismatch_note);
  }
  return r;
}

#endif

}  // namespace torchonnx
