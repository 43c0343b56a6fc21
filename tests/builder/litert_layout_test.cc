// ctest-labels: litert
// Data movement cases: reshapes, transposes, concatenation and splits,
// slices (all strided-slice mask kinds), pads, tiling, broadcasting, gathers,
// top-k, arg max/min and cumulative sums. Most are checked element by
// element against index arithmetic done here.
#include "builder/litert_case.h"

namespace gpuclean::testing {
namespace {

// out[index] = in[source(index)] over the output's shape.
void ExpectGathered(const npy::Array& in, const npy::Array& out,
                    const std::function<std::vector<int32_t>(const std::vector<int32_t>&)>& source) {
  const Shape is(in.shape.begin(), in.shape.end()), os(out.shape.begin(), out.shape.end());
  const std::vector<float> x = Floats(in), y = Floats(out);
  ForEachIndex(os, [&](const std::vector<int32_t>& i) {
    EXPECT_EQ(y[Offset(os, i)], x[Offset(is, source(i))]) << "at " << ir::FormatShape(i);
  });
}

OpCase SingleOutputCase(std::string name, std::vector<Shape> inputs,
                        std::function<int(GraphBuilder&, const std::vector<int>&)> make,
                        std::function<void(const Arrays&, const Arrays&)> check = nullptr) {
  OpCase c;
  c.name = std::move(name);
  c.build = [inputs, make] {
    return OneOp(inputs, [&](GraphBuilder& b, const std::vector<int>& in) { return std::vector<int>{make(b, in)}; });
  };
  c.check = std::move(check);
  return c;
}

OpCase StridedSliceCase(std::string name, std::vector<int32_t> begin, std::vector<int32_t> end,
                        std::vector<int32_t> strides, builder::StridedSliceMasks masks, Shape expected) {
  const Shape input = {4, 5, 6};
  return SingleOutputCase(
      std::move(name), {input},
      [=](GraphBuilder& b, const std::vector<int>& in) {
        const int out = b.StridedSlice(in[0], begin, end, strides, masks);
        EXPECT_EQ(b.shape(out), expected);
        return out;
      },
      [=](const Arrays& in, const Arrays& out) {
        tfl::StridedSliceOptionsT o;
        o.begin_mask = masks.begin;
        o.end_mask = masks.end;
        o.ellipsis_mask = masks.ellipsis;
        o.new_axis_mask = masks.new_axis;
        o.shrink_axis_mask = masks.shrink_axis;
        o.offset = masks.offset;
        const std::vector<int64_t> b64(begin.begin(), begin.end()), e64(end.begin(), end.end()),
            s64(strides.begin(), strides.end());
        const ir::StridedSlicePlan plan = ir::PlanStridedSlice(input, b64, e64, s64, o);
        // New axes have size 1, so the input addressed with the effective
        // shape is the input itself.
        Shape walk;
        for (size_t d = 0; d < plan.begin.size(); ++d) {
          const int32_t span = plan.stride[d] > 0 ? plan.end[d] - plan.begin[d] : plan.begin[d] - plan.end[d];
          const int32_t step = std::abs(plan.stride[d]);
          walk.push_back(std::max(0, (span + step - 1) / step));
        }
        const std::vector<float> x = Floats(in[0]);
        std::vector<float> want;
        ForEachIndex(walk, [&](const std::vector<int32_t>& i) {
          std::vector<int32_t> source;
          for (size_t d = 0; d < i.size(); ++d) source.push_back(plan.begin[d] + i[d] * plan.stride[d]);
          want.push_back(x[Offset(plan.effective_shape, source)]);
        });
        ExpectFloatsNear(Floats(out[0]), want, 0);
      });
}

// Mirror padding reference: index i of a padded axis of size n, `before`
// elements added in front.
int32_t MirrorIndex(int32_t i, int32_t before, int32_t n, bool symmetric) {
  int32_t j = i - before;
  if (j < 0) j = symmetric ? -j - 1 : -j;
  if (j >= n) j = symmetric ? 2 * n - j - 1 : 2 * n - j - 2;
  return j;
}

}  // namespace

std::vector<OpCase> LayoutCases() {
  std::vector<OpCase> cases;
  auto same_values = [](const Arrays& in, const Arrays& out) { ExpectFloatsNear(Floats(out[0]), Floats(in[0]), 0); };

  cases.push_back(SingleOutputCase(
      "RESHAPE_infer_minus1", {{2, 3, 4}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.Reshape(in[0], {4, -1});
      },
      same_values));
  cases.push_back(SingleOutputCase(
      "SQUEEZE_all_unit_dims", {{1, 3, 1, 4}},
      [](GraphBuilder& b, const std::vector<int>& in) { return b.Squeeze(in[0]); }, same_values));
  cases.push_back(SingleOutputCase(
      "SQUEEZE_negative_dim", {{1, 3, 1, 4}},
      [](GraphBuilder& b, const std::vector<int>& in) { return b.Squeeze(in[0], {-2}); }, same_values));
  cases.push_back(SingleOutputCase(
      "EXPAND_DIMS_negative_axis", {{3, 4}},
      [](GraphBuilder& b, const std::vector<int>& in) { return b.ExpandDims(in[0], -1); }, same_values));

  cases.push_back(SingleOutputCase(
      "TRANSPOSE_nhwc_to_nchw", {{2, 3, 4, 5}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.Transpose(in[0], {0, 3, 1, 2});
      },
      [](const Arrays& in, const Arrays& out) {
        ExpectGathered(in[0], out[0], [](const std::vector<int32_t>& i) {
          return std::vector<int32_t>{i[0], i[2], i[3], i[1]};
        });
      }));

  cases.push_back(SingleOutputCase(
      "CONCATENATION_three_inputs_axis_minus1", {{2, 3, 1}, {2, 3, 2}, {2, 3, 4}},
      [](GraphBuilder& b, const std::vector<int>& in) { return b.Concatenation(in, -1); },
      [](const Arrays& in, const Arrays& out) {
        const std::vector<float> got = Floats(out[0]);
        std::vector<float> want;
        for (int row = 0; row < 6; ++row)
          for (const npy::Array& part : in) {
            const int64_t width = part.shape[2];
            for (int64_t k = 0; k < width; ++k) want.push_back(part.as<float>()[row * width + k]);
          }
        ExpectFloatsNear(got, want, 0);
      }));

  cases.push_back(SingleOutputCase(
      "SLICE_size_minus1", {{3, 4, 5}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.Slice(in[0], {1, 0, 2}, {2, -1, 2});
      },
      [](const Arrays& in, const Arrays& out) {
        ExpectGathered(in[0], out[0], [](const std::vector<int32_t>& i) {
          return std::vector<int32_t>{i[0] + 1, i[1], i[2] + 2};
        });
      }));

  cases.push_back(StridedSliceCase("STRIDED_SLICE_begin_end_masks", {1, 9, 0}, {3, 0, 6}, {1, 1, 2},
                                   {.begin = 2, .end = 2}, {2, 5, 3}));
  cases.push_back(
      StridedSliceCase("STRIDED_SLICE_negative_strides", {-1, 4, 0}, {0, -6, 6}, {-1, -2, 1}, {}, {3, 3, 6}));
  // x[1, ..., newaxis, 2:4]
  cases.push_back(StridedSliceCase("STRIDED_SLICE_ellipsis_new_axis_shrink", {1, 0, 0, 2}, {2, 0, 0, 4}, {1, 1, 1, 1},
                                   {.ellipsis = 2, .new_axis = 4, .shrink_axis = 1}, {5, 1, 2}));
  cases.push_back(
      StridedSliceCase("STRIDED_SLICE_offset_lengths", {1, 2, 0}, {2, 3, 6}, {1, 1, 3}, {.offset = true}, {2, 3, 2}));

  cases.push_back(SingleOutputCase(
      "PAD_uneven", {{2, 3}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.Pad(in[0], {{1, 0}, {2, 1}});
      },
      [](const Arrays& in, const Arrays& out) {
        const std::vector<float> x = Floats(in[0]);
        std::vector<float> want;
        ForEachIndex({3, 6}, [&](const std::vector<int32_t>& i) {
          const int32_t r = i[0] - 1, c = i[1] - 2;
          want.push_back(r >= 0 && r < 2 && c >= 0 && c < 3 ? x[r * 3 + c] : 0.0f);
        });
        ExpectFloatsNear(Floats(out[0]), want, 0);
      }));

  cases.push_back(SingleOutputCase(
      "PADV2_constant_value", {{2, 3}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.PadV2(in[0], {{0, 1}, {1, 1}}, 7.5f);
      },
      [](const Arrays& in, const Arrays& out) {
        const std::vector<float> x = Floats(in[0]);
        std::vector<float> want;
        ForEachIndex({3, 5}, [&](const std::vector<int32_t>& i) {
          const int32_t r = i[0], c = i[1] - 1;
          want.push_back(r < 2 && c >= 0 && c < 3 ? x[r * 3 + c] : 7.5f);
        });
        ExpectFloatsNear(Floats(out[0]), want, 0);
      }));

  for (bool symmetric : {false, true}) {
    const builder::Paddings pads = symmetric ? builder::Paddings{{3, 0}, {1, 4}} : builder::Paddings{{1, 2}, {2, 3}};
    cases.push_back(SingleOutputCase(
        symmetric ? "MIRROR_PAD_symmetric" : "MIRROR_PAD_reflect", {{3, 4}},
        [=](GraphBuilder& b, const std::vector<int>& in) {
          return b.MirrorPad(in[0], pads, symmetric ? tfl::MirrorPadMode_SYMMETRIC : tfl::MirrorPadMode_REFLECT);
        },
        [=](const Arrays& in, const Arrays& out) {
          ExpectGathered(in[0], out[0], [&](const std::vector<int32_t>& i) {
            return std::vector<int32_t>{MirrorIndex(i[0], pads[0][0], 3, symmetric),
                                        MirrorIndex(i[1], pads[1][0], 4, symmetric)};
          });
        }));
  }

  OpCase split;
  split.name = "SPLIT_three_ways";
  split.build = [] {
    return OneOp({{2, 6, 3}}, [](GraphBuilder& b, const std::vector<int>& in) { return b.Split(in[0], 1, 3); });
  };
  split.check = [](const Arrays& in, const Arrays& out) {
    ASSERT_EQ(out.size(), 3u);
    for (int32_t part = 0; part < 3; ++part)
      ExpectGathered(in[0], out[part], [part](const std::vector<int32_t>& i) {
        return std::vector<int32_t>{i[0], i[1] + 2 * part, i[2]};
      });
  };
  cases.push_back(split);

  OpCase split_v;
  split_v.name = "SPLIT_V_with_remainder";
  split_v.build = [] {
    return OneOp({{2, 7}}, [](GraphBuilder& b, const std::vector<int>& in) { return b.SplitV(in[0], {2, -1, 1}, -1); });
  };
  split_v.check = [](const Arrays& in, const Arrays& out) {
    ASSERT_EQ(out.size(), 3u);
    const int32_t starts[] = {0, 2, 6};
    for (int part = 0; part < 3; ++part)
      ExpectGathered(in[0], out[part], [&](const std::vector<int32_t>& i) {
        return std::vector<int32_t>{i[0], i[1] + starts[part]};
      });
  };
  cases.push_back(split_v);

  OpCase pack;
  pack.name = "PACK_axis_minus1";
  pack.build = [] {
    return OneOp({{2, 3}, {2, 3}, {2, 3}},
                 [](GraphBuilder& b, const std::vector<int>& in) { return std::vector<int>{b.Pack(in, -1)}; });
  };
  pack.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> got = Floats(out[0]);
    ForEachIndex({2, 3, 3}, [&](const std::vector<int32_t>& i) {
      EXPECT_EQ(got[Offset({2, 3, 3}, i)], in[i[2]].as<float>()[i[0] * 3 + i[1]]);
    });
  };
  cases.push_back(pack);

  OpCase unpack;
  unpack.name = "UNPACK_axis1";
  unpack.build = [] {
    return OneOp({{3, 2, 4}}, [](GraphBuilder& b, const std::vector<int>& in) { return b.Unpack(in[0], 1); });
  };
  unpack.check = [](const Arrays& in, const Arrays& out) {
    ASSERT_EQ(out.size(), 2u);
    for (int32_t part = 0; part < 2; ++part)
      ExpectGathered(in[0], out[part], [part](const std::vector<int32_t>& i) {
        return std::vector<int32_t>{i[0], part, i[1]};
      });
  };
  cases.push_back(unpack);

  cases.push_back(SingleOutputCase(
      "TILE_2x3", {{2, 3}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.Tile(in[0], {2, 3});
      },
      [](const Arrays& in, const Arrays& out) {
        ExpectGathered(in[0], out[0], [](const std::vector<int32_t>& i) {
          return std::vector<int32_t>{i[0] % 2, i[1] % 3};
        });
      }));

  cases.push_back(SingleOutputCase(
      "BROADCAST_TO_rank3", {{3, 1}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.BroadcastTo(in[0], {2, 3, 4});
      },
      [](const Arrays& in, const Arrays& out) {
        ExpectGathered(in[0], out[0], [](const std::vector<int32_t>& i) { return std::vector<int32_t>{i[1], 0}; });
      }));

  cases.push_back(SingleOutputCase(
      "GATHER_axis1_constant_indices", {{3, 5, 2}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.Gather(in[0], b.ConstI32("indices", {2, 2}, {4, 0, 1, 1}), 1);
      },
      [](const Arrays& in, const Arrays& out) {
        const int32_t indices[] = {4, 0, 1, 1};
        ExpectGathered(in[0], out[0], [&](const std::vector<int32_t>& i) {
          return std::vector<int32_t>{i[0], indices[i[1] * 2 + i[2]], i[3]};
        });
      }));

  cases.push_back(SingleOutputCase(
      "GATHER_batch_dims1", {{2, 5, 3}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.Gather(in[0], b.ConstI32("indices", {2, 4}, {0, 4, 2, 2, 1, 3, 0, 4}), 1, 1);
      },
      [](const Arrays& in, const Arrays& out) {
        const int32_t indices[] = {0, 4, 2, 2, 1, 3, 0, 4};
        ExpectGathered(in[0], out[0], [&](const std::vector<int32_t>& i) {
          return std::vector<int32_t>{i[0], indices[i[0] * 4 + i[1]], i[2]};
        });
      }));

  // Indices fed at run time as an int32 graph input.
  OpCase gather_runtime;
  gather_runtime.name = "GATHER_runtime_int32_indices";
  gather_runtime.build = [] {
    GraphBuilder b;
    const int params = b.Input("params", F32(), {6, 2});
    const int indices = b.Input("indices", I32(), {4});
    b.Output(b.Gather(params, indices, 0));
    return b.Finish();
  };
  gather_runtime.inputs = [](const ir::Model&) {
    return Arrays{FloatArray({6, 2}, Ramp(12, 5)), IntArray({4}, {5, 0, 3, 3})};
  };
  gather_runtime.check = [](const Arrays& in, const Arrays& out) {
    ExpectGathered(in[0], out[0], [&](const std::vector<int32_t>& i) {
      return std::vector<int32_t>{in[1].as<int32_t>()[i[0]], i[1]};
    });
  };
  cases.push_back(gather_runtime);

  cases.push_back(SingleOutputCase(
      "GATHER_ND_pairs", {{3, 4, 2}},
      [](GraphBuilder& b, const std::vector<int>& in) {
        return b.GatherNd(in[0], b.ConstI32("indices", {2, 2}, {0, 1, 2, 3}));
      },
      [](const Arrays& in, const Arrays& out) {
        ExpectGathered(in[0], out[0], [](const std::vector<int32_t>& i) {
          return i[0] == 0 ? std::vector<int32_t>{0, 1, i[1]} : std::vector<int32_t>{2, 3, i[1]};
        });
      }));

  OpCase topk;
  topk.name = "TOPK_V2_k2";
  topk.build = [] {
    return OneOp({{3, 6}}, [](GraphBuilder& b, const std::vector<int>& in) {
      auto [values, indices] = b.TopKV2(in[0], 2);
      return std::vector<int>{values, indices};
    });
  };
  topk.check = [](const Arrays& in, const Arrays& out) {
    const std::vector<float> x = Floats(in[0]), values = Floats(out[0]);
    const std::vector<int32_t> indices = Ints(out[1]);
    for (int r = 0; r < 3; ++r) {
      std::vector<float> row(x.begin() + r * 6, x.begin() + r * 6 + 6);
      std::sort(row.begin(), row.end(), std::greater<>());
      for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(values[r * 2 + k], row[k]);
        EXPECT_EQ(x[r * 6 + indices[r * 2 + k]], row[k]);
      }
    }
  };
  cases.push_back(topk);

  for (bool is_max : {true, false}) {
    OpCase arg;
    arg.name = is_max ? "ARG_MAX_last_axis" : "ARG_MIN_axis0";
    arg.build = [is_max] {
      return OneOp({{3, 5}}, [is_max](GraphBuilder& b, const std::vector<int>& in) {
        return std::vector<int>{is_max ? b.ArgMax(in[0], -1) : b.ArgMin(in[0], 0)};
      });
    };
    arg.check = [is_max](const Arrays& in, const Arrays& out) {
      const std::vector<float> x = Floats(in[0]);
      const std::vector<int32_t> got = Ints(out[0]);
      if (is_max) {
        for (int r = 0; r < 3; ++r)
          EXPECT_EQ(got[r], std::max_element(x.begin() + r * 5, x.begin() + r * 5 + 5) - (x.begin() + r * 5));
      } else {
        for (int c = 0; c < 5; ++c) {
          int best = 0;
          for (int r = 1; r < 3; ++r)
            if (x[r * 5 + c] < x[best * 5 + c]) best = r;
          EXPECT_EQ(got[c], best);
        }
      }
    };
    cases.push_back(arg);
  }

  cases.push_back(SingleOutputCase(
      "CUMSUM_exclusive_reverse", {{2, 4}},
      [](GraphBuilder& b, const std::vector<int>& in) { return b.Cumsum(in[0], 1, true, true); },
      [](const Arrays& in, const Arrays& out) {
        const std::vector<float> x = Floats(in[0]);
        std::vector<float> want(8);
        for (int r = 0; r < 2; ++r) {
          float running = 0;
          for (int c = 3; c >= 0; --c) {
            want[r * 4 + c] = running;
            running += x[r * 4 + c];
          }
        }
        ExpectFloatsNear(Floats(out[0]), want, 1e-5f);
      }));
  return cases;
}

}  // namespace gpuclean::testing
