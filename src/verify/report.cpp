// The printed forms of a VerifyResult: the table of `torchonnx verify`, and JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "torchonnx/verify.h"

namespace torchonnx {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  return shape.empty() ? "scalar" : fmt::format("{}", fmt::join(shape, "x"));
}

std::string error_text(double e) {
  return e == 0 ? "0" : fmt::format("{:.2g}", e);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double d) {
  return std::isfinite(d) ? fmt::format("{}", d) : "null";
}

// The table's line on how the detection records matched.
std::string detections_line(const DetectionMatch& d, const std::vector<OutputCheck>& outputs) {
  std::vector<std::string> names;
  for (size_t k : d.outputs) names.push_back(k < outputs.size() ? outputs[k].name : "?");
  std::string text = fmt::format("detections ({}): ", fmt::join(names, ", "));
  if (!d.note.empty()) return text + "NO  (" + d.note + ")\n";
  text += fmt::format("{} of {} matched by label, score and box ({} needed){}", d.matched, d.count,
                      d.needed, d.pass ? "" : "  NO");
  if (d.differing > 0) {
    text += fmt::format("; {} matched by box and score differ in another output", d.differing);
  }
  return text + "\n";
}

}  // namespace

std::string format_mismatch(const Mismatch& m) {
  // A long lowering (an LSTM, a fused attention layer) is shown by its distinct ops.
  std::vector<std::string> shown;
  for (const auto& op : m.onnx_ops) {
    if (m.onnx_ops.size() <= 6 || std::find(shown.begin(), shown.end(), op) == shown.end()) {
      shown.push_back(op);
    }
  }
  std::string ops =
      m.onnx_ops.empty() ? "(no ONNX node)" : fmt::format("{}", fmt::join(shown, ", "));
  if (shown.size() < m.onnx_ops.size()) ops += fmt::format(" ({} nodes)", m.onnx_ops.size());
  std::string text =
      fmt::format("{}{} → {} [{}] at opset {}: ", m.kind,
                  m.location.empty() ? "" : " (" + m.location + ")", ops, m.converter, m.opset);
  text +=
      m.detail.empty() ? fmt::format("max abs error {}", error_text(m.max_abs_error)) : m.detail;
  return text;
}

std::string format_verify_result(const VerifyResult& r) {
  std::string out;
  size_t name_width = 6, shape_width = 5;
  for (const auto& set : r.input_sets) {
    for (const auto& o : set.outputs) {
      name_width = std::max(name_width, o.name.size());
      shape_width = std::max(shape_width, shape_text(o.shape).size());
    }
  }
  size_t outputs = 0, failed = 0, failed_sets = 0;
  for (const auto& set : r.input_sets) {
    if (r.input_sets.size() > 1) out += fmt::format("on {}:\n", set.label);
    if (!set.skipped.empty()) {
      out += fmt::format("  skipped: {}\n", set.skipped);
      continue;
    }
    if (!set.error.empty()) {
      ++failed_sets;
      out += fmt::format("  FAILED: {}\n", set.error);
      continue;
    }
    out += fmt::format("{:<{}}  {:<{}}  {:<8}  {:>11}  {:>11}  {}\n", "output", name_width, "shape",
                       shape_width, "dtype", "max abs err", "max rel err", "pass");
    for (const auto& o : set.outputs) {
      ++outputs;
      failed += !o.pass;
      out += fmt::format("{:<{}}  {:<{}}  {:<8}  {:>11}  {:>11}  {}{}\n", o.name, name_width,
                         shape_text(o.shape), shape_width, o.dtype, error_text(o.max_abs_error),
                         error_text(o.max_rel_error), o.pass ? "yes" : "NO",
                         o.note.empty() ? "" : "  (" + o.note + ")");
    }
    if (set.detections) out += detections_line(*set.detections, set.outputs);
  }
  const std::string tolerance =
      r.atol_scale > 0
          ? fmt::format("rtol {:g}, atol max({:g}, {:g} * scale of the output), opset {}", r.rtol,
                        r.atol, r.atol_scale, r.opset)
          : fmt::format("rtol {:g}, atol {:g}, opset {}", r.rtol, r.atol, r.opset);
  if (r.pass) {
    out += fmt::format("PASS: {} output{} of ONNX Runtime match libtorch's ({})\n", outputs,
                       outputs == 1 ? "" : "s", tolerance);
  } else {
    out += fmt::format("FAIL: {} of {} outputs differ from libtorch's{} ({})\n", failed, outputs,
                       failed_sets ? fmt::format(", ONNX Runtime failed on {} input set{}",
                                                 failed_sets, failed_sets == 1 ? "" : "s")
                                   : "",
                       tolerance);
  }
  if (r.mismatch) {
    out += fmt::format(
        "first node that differs ({} of the graph's nodes compared, its inputs "
        "match): {}\n  value {}\n",
        r.mismatch->nodes_compared, format_mismatch(*r.mismatch), r.mismatch->value);
  } else if (!r.mismatch_note.empty()) {
    out += fmt::format("find-mismatch found no node: {}\n", r.mismatch_note);
  }
  return out;
}

std::string verify_result_json(const VerifyResult& r) {
  std::string sets;
  for (const auto& set : r.input_sets) {
    std::string outs;
    for (const auto& o : set.outputs) {
      if (!outs.empty()) outs += ", ";
      outs += fmt::format(
          "{{\"name\": {}, \"shape\": [{}], \"expected_shape\": [{}], \"dtype\": {}, "
          "\"expected_dtype\": {}, \"max_abs_error\": {}, \"max_rel_error\": {}, "
          "\"mismatched\": {}, \"nan_inf_match\": {}, \"pass\": {}, \"note\": {}}}",
          json_string(o.name), fmt::join(o.shape, ", "), fmt::join(o.expected_shape, ", "),
          json_string(o.dtype), json_string(o.expected_dtype), json_number(o.max_abs_error),
          json_number(o.max_rel_error), o.mismatched, o.nan_inf_match, o.pass, json_string(o.note));
    }
    std::string detections = "null";
    if (set.detections) {
      const DetectionMatch& d = *set.detections;
      detections = fmt::format(
          "{{\"outputs\": [{}], \"count\": {}, \"matched\": {}, \"needed\": {}, "
          "\"differing\": {}, \"pass\": {}, \"note\": {}}}",
          fmt::join(d.outputs, ", "), d.count, d.matched, d.needed, d.differing, d.pass,
          json_string(d.note));
    }
    if (!sets.empty()) sets += ", ";
    sets += fmt::format(
        "{{\"inputs\": {}, \"pass\": {}, \"skipped\": {}, \"error\": {}, \"outputs\": [{}], "
        "\"detections\": {}}}",
        json_string(set.label), set.pass, json_string(set.skipped), json_string(set.error), outs,
        detections);
  }
  std::string mismatch = "null";
  if (r.mismatch) {
    const Mismatch& m = *r.mismatch;
    std::string ops;
    for (const auto& op : m.onnx_ops) ops += (ops.empty() ? "" : ", ") + json_string(op);
    mismatch = fmt::format(
        "{{\"kind\": {}, \"location\": {}, \"converter\": {}, \"onnx_ops\": [{}], \"opset\": {}, "
        "\"value\": {}, \"max_abs_error\": {}, \"detail\": {}, \"nodes_compared\": {}, "
        "\"message\": {}}}",
        json_string(m.kind), json_string(m.location), json_string(m.converter), ops, m.opset,
        json_string(m.value), json_number(m.max_abs_error), json_string(m.detail), m.nodes_compared,
        json_string(format_mismatch(m)));
  }
  return fmt::format(
      "{{\"pass\": {}, \"opset\": {}, \"rtol\": {}, \"atol\": {}, \"atol_scale\": {}, "
      "\"input_sets\": [{}], \"mismatch\": {}, \"mismatch_note\": {}}}\n",
      r.pass, r.opset, json_number(r.rtol), json_number(r.atol), json_number(r.atol_scale), sets,
      mismatch, json_string(r.mismatch_note));
}

}  // namespace torchonnx
