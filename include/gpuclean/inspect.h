#pragma once
// `gpuclean inspect`: the structure of a model as JSON (the documented shape,
// docs/inspect.md) and as text rendered from that same JSON.
#include <nlohmann/json.hpp>
#include <string>

#include "gpuclean/ir.h"

namespace gpuclean::inspect {

nlohmann::json Summarize(const ir::Model& model);
std::string RenderText(const nlohmann::json& summary);

}  // namespace gpuclean::inspect
