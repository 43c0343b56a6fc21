#pragma once
// --image [KEY=]FILE, --normalize, --layout: photographs as model inputs,
// shared by the commands that run a model (run, bisect).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/image.h"

namespace gpuclean::cli {

struct ImageFlags {
  std::vector<std::string> images;
  std::string normalize = "0,1";
  std::string layout = "auto";

  void Add(CLI::App* cmd) {
    cmd->add_option("--image", images,
                    "[KEY=]FILE: a PNG or JPEG resized (bilinear) to the input's H x W, normalised and laid out for "
                    "it; without KEY it goes to the first input shaped like an image (float32 [1,H,W,3] or "
                    "[1,3,H,W]) (repeatable)");
    cmd->add_option("--normalize", normalize,
                    "pixel p in 0..255 -> 0,1: p/255 | -1,1: p/127.5-1 | imagenet | mean=M:std=S: (p-M)/S, M and S "
                    "one number or R,G,B")
        ->default_val("0,1");
    cmd->add_option("--layout", layout, "auto | nhwc | nchw: where the image's channels go (auto: from the shape)")
        ->default_val("auto");
  }

  // Error(kUsage) for a malformed flag. "KEY=FILE" splits at the first '='
  // unless the whole text names an existing file.
  image::ImageInputs Parse() const {
    image::ImageInputs out;
    out.options.normalization = image::ParseNormalization(normalize);
    out.options.layout = image::ParseLayout(layout);
    for (const std::string& spec : images) {
      const auto eq = spec.find('=');
      std::error_code ec;
      if (eq == std::string::npos || std::filesystem::exists(spec, ec)) {
        out.images.push_back({"", spec});
        continue;
      }
      if (eq == 0 || eq + 1 == spec.size())
        throw Error(ErrorKind::kUsage, "--image expects FILE or KEY=FILE, got '" + spec + "'");
      out.images.push_back({spec.substr(0, eq), spec.substr(eq + 1)});
    }
    return out;
  }
};

}  // namespace gpuclean::cli
