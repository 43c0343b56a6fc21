#pragma once
// The two halves of the synth catalogue; catalog.cc joins them.
#include <vector>

#include "gpuclean/synth.h"

namespace gpuclean::synth::internal {

inline constexpr auto F32 = tfl::TensorType_FLOAT32;

// One micro-probe per lint rule, each followed by its near-miss.
std::vector<SynthGraph> ProbeGraphs();
// The fp16 failure patterns, each followed by its fixed form.
std::vector<SynthGraph> PatternGraphs();

}  // namespace gpuclean::synth::internal
