#include "gen/spec_text.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace anvil {
namespace {

using nlohmann::json;

std::string List(const json& values) {
  std::string out = "[";
  if (values.is_array()) {
    for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i].dump();
  }
  return out + "]";
}

std::string Tensor(const json& t) {
  if (t.contains("scalar")) return t.value("name", "?") + ": " + t["scalar"].dump() + " (not a tensor)";
  std::string line = t.value("name", "?") + ": " + t.value("dtype", "?") + " " + List(t.value("shape", json())) +
                     ", strides " + List(t.value("strides", json()));
  if (t.contains("kind")) line += " (" + t["kind"].get<std::string>() + ")";
  return line;
}

std::string Shapes(const json& shapes) {
  std::string out;
  if (shapes.is_array()) {
    for (std::size_t i = 0; i < shapes.size(); ++i) out += (i ? ", " : "") + List(shapes[i]);
  }
  return out.empty() ? "()" : out;
}

}  // namespace

std::string TensorMetadataText(const std::string& spec_json, const std::string& why) {
  const json spec = spec_json.empty() ? json() : json::parse(spec_json, nullptr, false);
  if (!spec.is_object()) {
    return "(The tensor metadata could not be derived without running the reference" +
           (why.empty() ? std::string(")") : ": " + why + ")");
  }
  std::string out = "Inputs of forward, in order:\n";
  for (const json& t : spec.value("inputs", json::array())) out += "  " + Tensor(t) + "\n";
  const json params = spec.value("params", json::array());
  out += "Parameters, then buffers (named_parameters(), named_buffers() order):\n";
  if (params.empty()) out += "  (none)\n";
  for (const json& t : params) out += "  " + Tensor(t) + "\n";
  out += "Outputs of forward, in order:\n";
  for (const json& t : spec.value("outputs", json::array())) out += "  " + Tensor(t) + "\n";
  const json scalars = spec.value("scalars", json::object());
  if (scalars.is_object() && !scalars.empty()) {
    out += "Hyper-parameters of the model:";
    for (const auto& [k, v] : scalars.items()) out += " " + k + "=" + v.dump();
    out += "\n";
  }
  if (spec.contains("init_inputs"))
    out += "Constructor arguments (get_init_inputs()): " + spec["init_inputs"].dump() + "\n";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string OpTraceText(const std::string& spec_json, int max_lines) {
  const json spec = spec_json.empty() ? json() : json::parse(spec_json, nullptr, false);
  if (!spec.is_object() || !spec.contains("ops")) return "(no op trace: see above)";
  std::vector<std::pair<std::string, int>> lines;
  for (const json& op : spec["ops"]) {
    const std::string line = op.value("op", "?") + "  " + Shapes(op.value("in_shapes", json())) + " -> " +
                             Shapes(op.value("out_shapes", json()));
    if (!lines.empty() && lines.back().first == line) {
      ++lines.back().second;
    } else {
      lines.push_back({line, 1});
    }
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size() && static_cast<int>(i) < max_lines; ++i) {
    out += lines[i].first + (lines[i].second > 1 ? "  x" + std::to_string(lines[i].second) : "") + "\n";
  }
  if (static_cast<int>(lines.size()) > max_lines) {
    out += "... and " + std::to_string(lines.size() - max_lines) + " more\n";
  }
  if (out.empty()) out = "(forward dispatches no aten op)\n";
  out.pop_back();
  return out;
}

}  // namespace anvil
