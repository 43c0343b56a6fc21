// The one runtime enum: names round-trip, and each command refuses the
// runtimes it cannot drive by name, in one line with exit 2.
#include <gtest/gtest.h>

#include <algorithm>

#include "gpuclean/error.h"
#include "gpuclean/runtime.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

TEST(Runtime, NamesRoundTripAndRefusalsListTheAccepted) {
  for (Runtime r : {Runtime::kOurs, Runtime::kLiteRtWasm, Runtime::kLiteRtWebGpu, Runtime::kOnnxRuntime})
    EXPECT_EQ(ParseRuntime(RuntimeName(r), {r}), r) << RuntimeName(r);
  try {
    ParseRuntime("ours", {Runtime::kLiteRtWasm, Runtime::kOnnxRuntime});
    FAIL() << "ours was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("one of litert-wasm, onnxruntime, got 'ours'"), std::string::npos) << e.what();
  }
}

TEST(Runtime, UnknownRuntimeOnTheCommandLineIsOneLineExitTwo) {
  for (const char* args : {"bench m.tflite --runtime nosuch", "probe m.tflite --runtime ours --out o"}) {
    const auto r = testing::RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("--runtime"), std::string::npos) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
