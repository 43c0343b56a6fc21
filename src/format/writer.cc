#include <fcntl.h>
#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"

namespace gpuclean::format {
namespace {

namespace fb = flatbuffers;
constexpr size_t kBufferAlignment = 16;
// flatbuffers cannot address past 2 GB; leave room for the graph itself.
constexpr uint64_t kInlineDataLimit = (uint64_t{1} << 31) - (uint64_t{64} << 20);

class Writer {
 public:
  Writer(const ir::Model& model, const WriteOptions& options) : model_(model), options_(options) {}

  std::vector<uint8_t> Write() {
    if (!model_.unpreservable.empty())
      throw Error(ErrorKind::kUnsupported,
                  fmt::format("{}: refusing to write: the model holds data this writer would drop ({})",
                              model_.source.empty() ? "model" : model_.source, model_.unpreservable.front()));
    external_ = options_.external_buffers || TotalConstBytes() > kInlineDataLimit;
    buffers_.push_back({});  // buffer 0 is the empty sentinel by convention

    std::vector<fb::Offset<tfl::SubGraph>> subgraphs;
    for (const ir::Subgraph& sg : model_.subgraphs) subgraphs.push_back(WriteSubgraph(sg));

    std::vector<fb::Offset<tfl::Metadata>> metadata;
    for (const ir::Metadata& m : model_.metadata)
      metadata.push_back(tfl::CreateMetadata(fbb_, fbb_.CreateString(m.name), BufferIndex(m.data)));
    std::vector<int32_t> metadata_buffers;
    for (const Bytes& b : model_.metadata_buffers) metadata_buffers.push_back(static_cast<int32_t>(BufferIndex(b)));

    std::vector<fb::Offset<tfl::SignatureDef>> signatures;
    for (const ir::SignatureDef& sig : model_.signatures) signatures.push_back(WriteSignature(sig));

    std::vector<fb::Offset<tfl::OperatorCode>> codes;
    for (const auto& [code, custom, version] : op_codes_) {
      const auto deprecated =
          static_cast<int8_t>(std::min<int32_t>(code, tfl::BuiltinOperator_PLACEHOLDER_FOR_GREATER_OP_CODES));
      codes.push_back(tfl::CreateOperatorCode(fbb_, deprecated, custom.empty() ? 0 : fbb_.CreateString(custom), version,
                                              static_cast<tfl::BuiltinOperator>(code)));
    }
    std::vector<fb::Offset<tfl::Buffer>> buffers = WriteBuffers();

    auto root = tfl::CreateModel(
        fbb_, model_.version, fbb_.CreateVector(codes), fbb_.CreateVector(subgraphs),
        model_.description.empty() ? 0 : fbb_.CreateString(model_.description), fbb_.CreateVector(buffers),
        metadata_buffers.empty() ? 0 : fbb_.CreateVector(metadata_buffers),
        metadata.empty() ? 0 : fbb_.CreateVector(metadata), signatures.empty() ? 0 : fbb_.CreateVector(signatures));
    fbb_.Finish(root, tfl::ModelIdentifier());
    if (!external_) return {fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize()};
    return AppendExternalData();
  }

 private:
  uint64_t TotalConstBytes() const {
    uint64_t total = 0;
    for (const ir::Subgraph& sg : model_.subgraphs)
      for (const ir::Tensor& t : sg.tensors)
        if (t.data) total += t.data->size();
    return total;
  }

  // Tensors that shared a buffer in the source file share it again.
  uint32_t BufferIndex(const Bytes& data) {
    if (data.empty()) return 0;
    auto key = std::make_pair(data.data(), data.size());
    auto it = buffer_index_.find(key);
    if (it != buffer_index_.end()) return it->second;
    const auto index = static_cast<uint32_t>(buffers_.size());
    buffers_.push_back(data);
    buffer_index_.emplace(key, index);
    return index;
  }

  uint32_t OpCodeIndex(const ir::Op& op) {
    auto key = std::make_tuple(static_cast<int32_t>(op.code),
                               op.code == tfl::BuiltinOperator_CUSTOM ? op.custom_code : "", op.version);
    auto [it, inserted] = op_code_index_.emplace(key, static_cast<uint32_t>(op_codes_.size()));
    if (inserted) op_codes_.push_back(key);
    return it->second;
  }

  fb::Offset<tfl::SubGraph> WriteSubgraph(const ir::Subgraph& sg) {
    std::vector<fb::Offset<tfl::Tensor>> tensors;
    for (const ir::Tensor& t : sg.tensors) tensors.push_back(WriteTensor(t));
    std::vector<fb::Offset<tfl::Operator>> ops;
    for (const ir::Op& op : sg.ops) ops.push_back(WriteOp(op));
    return tfl::CreateSubGraph(fbb_, fbb_.CreateVector(tensors), fbb_.CreateVector(sg.inputs),
                               fbb_.CreateVector(sg.outputs), fbb_.CreateVector(ops), fbb_.CreateString(sg.name),
                               sg.debug_metadata_index);
  }

  fb::Offset<tfl::Tensor> WriteTensor(const ir::Tensor& t) {
    fb::Offset<tfl::QuantizationParameters> quant = 0;
    if (!t.quant.empty() || t.quant.quantized_dimension != 0) {
      const ir::Quantization& q = t.quant;
      quant = tfl::CreateQuantizationParameters(
          fbb_, q.min.empty() ? 0 : fbb_.CreateVector(q.min), q.max.empty() ? 0 : fbb_.CreateVector(q.max),
          q.scale.empty() ? 0 : fbb_.CreateVector(q.scale), q.zero_point.empty() ? 0 : fbb_.CreateVector(q.zero_point),
          tfl::QuantizationDetails_NONE, 0, q.quantized_dimension);
    }
    fb::Offset<tfl::SparsityParameters> sparsity = 0;
    if (t.sparsity) sparsity = tfl::SparsityParameters::Pack(fbb_, &*t.sparsity);
    const uint32_t buffer = t.data ? BufferIndex(*t.data) : 0;
    return tfl::CreateTensor(fbb_, fbb_.CreateVector(t.shape), t.dtype, buffer, fbb_.CreateString(t.name), quant,
                             t.is_variable, sparsity,
                             t.shape_signature.empty() ? 0 : fbb_.CreateVector(t.shape_signature), t.has_rank);
  }

  fb::Offset<tfl::Operator> WriteOp(const ir::Op& op) {
    std::vector<uint8_t> mutating(op.mutating_variable_inputs.begin(), op.mutating_variable_inputs.end());
    return tfl::CreateOperator(fbb_, OpCodeIndex(op), fbb_.CreateVector(op.inputs), fbb_.CreateVector(op.outputs),
                               op.options.type, op.options.Pack(fbb_),
                               op.custom_options.empty() ? 0 : fbb_.CreateVector(op.custom_options),
                               op.custom_options_format, mutating.empty() ? 0 : fbb_.CreateVector(mutating),
                               op.intermediates.empty() ? 0 : fbb_.CreateVector(op.intermediates), 0, 0,
                               op.options2.type, op.options2.Pack(fbb_), op.debug_metadata_index);
  }

  fb::Offset<tfl::SignatureDef> WriteSignature(const ir::SignatureDef& sig) {
    auto maps = [&](const std::vector<ir::TensorRef>& refs) {
      std::vector<fb::Offset<tfl::TensorMap>> out;
      for (const ir::TensorRef& r : refs)
        out.push_back(tfl::CreateTensorMap(fbb_, fbb_.CreateString(r.name), static_cast<uint32_t>(r.tensor)));
      return fbb_.CreateVector(out);
    };
    auto inputs = maps(sig.inputs);
    auto outputs = maps(sig.outputs);
    return tfl::CreateSignatureDef(fbb_, inputs, outputs, fbb_.CreateString(sig.key),
                                   static_cast<uint32_t>(sig.subgraph));
  }

  std::vector<fb::Offset<tfl::Buffer>> WriteBuffers() {
    std::vector<fb::Offset<tfl::Buffer>> out;
    for (const Bytes& b : buffers_) {
      if (b.empty()) {
        out.push_back(tfl::CreateBuffer(fbb_));
      } else if (external_) {
        // Placeholders (non-default so they are stored); patched once the
        // flatbuffer's size, and so each buffer's file offset, is known.
        out.push_back(tfl::CreateBuffer(fbb_, 0, 1, b.size()));
      } else {
        fbb_.ForceVectorAlignment(b.size(), 1, kBufferAlignment);
        out.push_back(tfl::CreateBuffer(fbb_, fbb_.CreateVector(b.data(), b.size())));
      }
    }
    return out;
  }

  std::vector<uint8_t> AppendExternalData() {
    std::vector<uint8_t> file(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
    auto* buffers = tfl::GetMutableModel(file.data())->mutable_buffers();
    for (size_t i = 0; i < buffers_.size(); ++i) {
      if (buffers_[i].empty()) continue;
      file.resize((file.size() + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment, 0);
      const uint64_t offset = file.size();
      file.insert(file.end(), buffers_[i].data(), buffers_[i].data() + buffers_[i].size());
      // `file` may have reallocated: look the table up again each time.
      buffers = tfl::GetMutableModel(file.data())->mutable_buffers();
      if (!buffers->GetMutableObject(static_cast<fb::uoffset_t>(i))->mutate_offset(offset))
        ThrowInternal("external buffer offset could not be patched");
    }
    return file;
  }

  const ir::Model& model_;
  WriteOptions options_;
  bool external_ = false;
  fb::FlatBufferBuilder fbb_{1 << 20};
  std::vector<Bytes> buffers_;
  std::map<std::pair<const uint8_t*, size_t>, uint32_t> buffer_index_;
  std::vector<std::tuple<int32_t, std::string, int32_t>> op_codes_;
  std::map<std::tuple<int32_t, std::string, int32_t>, uint32_t> op_code_index_;
};

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

std::vector<uint8_t> Serialize(const ir::Model& model, const WriteOptions& options) {
  return Writer(model, options).Write();
}

void WriteModel(const ir::Model& model, const std::string& path, const WriteOptions& options) {
  if (!model.source.empty() && SameFile(model.source, path))
    throw Error(ErrorKind::kUsage,
                fmt::format("{}: refusing to overwrite the input model; choose another output", path));
  std::vector<uint8_t> bytes = Serialize(model, options);
  WriteFileAtomically(path, bytes);
}

}  // namespace gpuclean::format
