#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "format/mapped_file.h"
#include "format/table_fields.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"

namespace gpuclean::format {
namespace {

// Reads one model. Every index the file holds is checked here, before the IR
// exists, so that code above the format layer can trust the IR.
class Reader {
 public:
  Reader(Bytes bytes, std::string source)
      : bytes_(std::move(bytes)), source_(std::move(source)), budget_(kBaseBudget + 4 * uint64_t{bytes_.size()}) {}

  ir::Model Read() {
    VerifyFlatbuffer();
    model_ = tfl::GetModel(bytes_.data());
    ir::Model out;
    out.source = source_;
    out.version = model_->version();
    if (model_->description()) out.description = model_->description()->str();
    NoteUnknownFields(model_, tfl::ModelTypeTable(), &out);
    if (model_->external_buffers() && model_->external_buffers()->size() > 0)
      NoteUnpreservable(&out, "model keeps tensor data in external buffer groups (separate weight files)");
    Charge(Size(model_->description()));
    ReadBuffers();
    ReadOperatorCodes(&out);
    if (!model_->subgraphs() || model_->subgraphs()->size() == 0) Fail("model has no subgraphs");
    for (flatbuffers::uoffset_t i = 0; i < model_->subgraphs()->size(); ++i)
      out.subgraphs.push_back(ReadSubgraph(i, &out));
    ReadMetadata(&out);
    ReadSignatures(&out);
    try {
      out.Validate();
    } catch (const Error& e) {
      Fail(e.what());
    }
    return out;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    ThrowBadInput(fmt::format("{}: {}", source_, OneLine(what)));
  }

  // Names in messages come from the file: a newline or an escape sequence in
  // one must not break the one-line message (or drive the terminal).
  static std::string OneLine(std::string s) {
    for (char& c : s)
      if (static_cast<unsigned char>(c) < 32 || c == 127) c = '?';
    return s;
  }

  // Records something the writer could not preserve, once.
  void NoteUnpreservable(ir::Model* out, std::string reason) {
    reason = OneLine(std::move(reason));
    if (!noted_.insert(reason).second) return;
    Charge(reason.size() + sizeof(std::string));
    out->unpreservable.push_back(std::move(reason));
  }

  // Flatbuffers may share tables: a vector of a million offsets to one tensor
  // with a long name is a small file that decodes to gigabytes. Everything
  // the reader copies into the IR, and every tensor reference (which later
  // passes expand, e.g. inspect's per-op JSON), is charged here, so memory
  // stays proportional to the file.
  static constexpr uint64_t kBaseBudget = uint64_t{128} << 20;
  static constexpr uint64_t kRefCost = 128;
  void Charge(uint64_t bytes) {
    charged_ += bytes;
    if (charged_ > budget_)
      Fail(
          fmt::format("model is too large to decode: its tables describe more than {} MiB of graph for a {}-byte "
                      "file (tables shared many times over?)",
                      budget_ >> 20, bytes_.size()));
  }
  template <typename T>
  static uint64_t Size(const flatbuffers::Vector<T>* v) {
    return v ? v->size() : 0;
  }
  static uint64_t Size(const flatbuffers::String* s) { return s ? s->size() : 0; }

  // The flatbuffers verifier checks that a vector's length is 4-aligned but
  // not that 8-byte elements are 8-aligned; reading misaligned ones is
  // undefined behaviour. (ReadModelBytes makes the buffer itself aligned.)
  void CheckAligned8(const void* elements, const std::string& who) const {
    if ((static_cast<const uint8_t*>(elements) - bytes_.data()) % 8 != 0)
      Fail(fmt::format("{} has a misaligned vector of 8-byte values (corrupt file)", who));
  }

  // Upper bound on what unpacking an options table copies, after checking
  // that its 8-byte vectors are aligned. Option tables hold scalars, strings
  // and vectors of scalars; a nested table (none today) is charged a flat
  // amount.
  uint64_t CheckOptions(const void* table, const flatbuffers::TypeTable* type, const std::string& who) const {
    uint64_t cost = 256;
    if (!table || !type || type->st != flatbuffers::ST_TABLE) return cost;
    const auto* t = static_cast<const flatbuffers::Table*>(table);
    for (size_t i = 0; i < type->num_elems; ++i) {
      const auto field = static_cast<flatbuffers::voffset_t>(4 + 2 * i);
      const flatbuffers::TypeCode code = type->type_codes[i];
      if (code.is_repeating) {
        const auto* v = t->GetPointer<const flatbuffers::Vector<uint8_t>*>(field);
        const bool offsets = code.base_type == flatbuffers::ET_STRING || code.base_type == flatbuffers::ET_SEQUENCE;
        const bool wide = code.base_type == flatbuffers::ET_LONG || code.base_type == flatbuffers::ET_ULONG ||
                          code.base_type == flatbuffers::ET_DOUBLE;
        if (v && wide) CheckAligned8(v->Data(), who + " options");
        cost += 32 + Size(v) * (offsets ? 64 : 8);
      } else if (code.base_type == flatbuffers::ET_STRING) {
        cost += 32 + Size(t->GetPointer<const flatbuffers::String*>(field));
      } else if (code.base_type == flatbuffers::ET_SEQUENCE) {
        cost += 256;
      }
    }
    return cost;
  }

  // The table type of member `member` of a union (BuiltinOptions...).
  static const flatbuffers::TypeTable* OptionsTypeTable(const flatbuffers::TypeTable* union_type, int member) {
    if (member <= 0 || static_cast<size_t>(member) >= union_type->num_elems) return nullptr;
    const flatbuffers::TypeCode code = union_type->type_codes[member];
    return code.sequence_ref < 0 ? nullptr : union_type->type_refs[code.sequence_ref]();
  }

  static uint64_t IndexVectorCost(tfl::SparseIndexVector type, const void* v) {
    if (!v) return 0;
    switch (type) {
      case tfl::SparseIndexVector_Int32Vector: return 4 * Size(static_cast<const tfl::Int32Vector*>(v)->values());
      case tfl::SparseIndexVector_Uint16Vector: return 2 * Size(static_cast<const tfl::Uint16Vector*>(v)->values());
      case tfl::SparseIndexVector_Uint8Vector: return Size(static_cast<const tfl::Uint8Vector*>(v)->values());
      default: return 0;
    }
  }

  // Checked and charged before unpacking: one SparsityParameters can list
  // the same large index vector many times over, and the verifier accepts a
  // union type without its table (or of a type we do not know), which the
  // unpacked copy could not be written back from.
  void CheckSparsity(const tfl::SparsityParameters* s, const std::string& who) {
    Charge(sizeof(tfl::SparsityParametersT) + 4 * (Size(s->traversal_order()) + Size(s->block_map())));
    const auto* dims = s->dim_metadata();
    if (!dims) return;
    auto check = [&](tfl::SparseIndexVector type, const void* value, flatbuffers::uoffset_t i, const char* field) {
      if (type == tfl::SparseIndexVector_NONE) return;
      if (type > tfl::SparseIndexVector_MAX || !value)
        Fail(fmt::format("{} sparsity dim_metadata {} has {} of type {} but {}", who, i, field, static_cast<int>(type),
                         value ? "that type is unknown" : "no table"));
    };
    for (flatbuffers::uoffset_t i = 0; i < dims->size(); ++i) {
      const tfl::DimensionMetadata* d = dims->Get(i);
      check(d->array_segments_type(), d->array_segments(), i, "array_segments");
      check(d->array_indices_type(), d->array_indices(), i, "array_indices");
      Charge(sizeof(tfl::DimensionMetadataT) + 64 + IndexVectorCost(d->array_segments_type(), d->array_segments()) +
             IndexVectorCost(d->array_indices_type(), d->array_indices()));
    }
  }

  void VerifyFlatbuffer() {
    const size_t size = bytes_.size();
    if (size == 0) Fail("file is empty");
    if (size < 8) Fail(fmt::format("file is {} bytes, too small to be a .tflite model", size));
    if (!flatbuffers::BufferHasIdentifier(bytes_.data(), tfl::ModelIdentifier()))
      Fail(fmt::format("not a .tflite model: file identifier is '{}', expected '{}'", Printable(bytes_.data() + 4, 4),
                       tfl::ModelIdentifier()));
    // The flatbuffer proper must sit in the first 2 GB; constant data past it
    // is reached through Buffer.offset and checked separately.
    const size_t verify_size = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    flatbuffers::Verifier::Options options;
    options.max_depth = 128;
    options.max_tables = 10'000'000;
    flatbuffers::Verifier verifier(bytes_.data(), verify_size, options);
    if (!tfl::VerifyModelBuffer(verifier))
      Fail(
          "flatbuffer verification failed (truncated or corrupt: an offset, vtable or vector points outside "
          "the file)");
  }

  static std::string Printable(const uint8_t* p, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (p[i] >= 32 && p[i] < 127) ? static_cast<char>(p[i]) : '?';
    return s;
  }

  void NoteUnknownFields(const void* table, const flatbuffers::TypeTable* type, ir::Model* out) {
    if (!table) return;
    std::string field = UnknownFieldIn(static_cast<const flatbuffers::Table*>(table), type);
    if (!field.empty())
      NoteUnpreservable(out, fmt::format("{} has a field this reader does not know ({})", TypeName(type), field));
  }

  void ReadBuffers() {
    const auto* buffers = model_->buffers();
    if (!buffers) return;
    Charge(sizeof(Bytes) * uint64_t{buffers->size()});
    buffers_.reserve(buffers->size());
    for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
      const tfl::Buffer* b = buffers->Get(i);
      if (b->offset() > 1) {
        const uint64_t offset = b->offset(), size = b->size();
        if (offset > bytes_.size() || size > bytes_.size() - offset)
          Fail(fmt::format("buffer {} lies outside the file (offset {}, size {}, file size {})", i, offset, size,
                           bytes_.size()));
        buffers_.emplace_back(bytes_.owner(), bytes_.data() + offset, size);
      } else if (b->data() && b->data()->size() > 0) {
        buffers_.emplace_back(bytes_.owner(), b->data()->data(), b->data()->size());
      } else {
        buffers_.emplace_back();
      }
    }
  }

  const Bytes& BufferAt(uint32_t index, const std::string& who) const {
    if (index >= buffers_.size())
      Fail(fmt::format("{} refers to buffer {} but the model has {} buffers", who, index, buffers_.size()));
    return buffers_[index];
  }

  void ReadOperatorCodes(ir::Model* out) {
    const auto* codes = model_->operator_codes();
    if (!codes) return;
    for (flatbuffers::uoffset_t i = 0; i < codes->size(); ++i) {
      const tfl::OperatorCode* c = codes->Get(i);
      NoteUnknownFields(c, tfl::OperatorCodeTypeTable(), out);
      Charge(sizeof(OpCode) + Size(c->custom_code()));
      // Old files set only the int8 field; new ones put a placeholder there
      // and the real code in the int32 field. The larger one is the op.
      const int32_t code = std::max<int32_t>(c->deprecated_builtin_code(), c->builtin_code());
      if (code < 0) Fail(fmt::format("operator code {} has negative builtin code {}", i, code));
      OpCode oc;
      oc.code = static_cast<tfl::BuiltinOperator>(code);
      if (c->custom_code()) oc.custom_code = c->custom_code()->str();
      oc.version = c->version();
      if (code > tfl::BuiltinOperator_MAX)
        NoteUnpreservable(out, fmt::format("operator code {} is builtin {} which this reader does not know", i, code));
      op_codes_.push_back(std::move(oc));
    }
  }

  std::vector<int32_t> Indices(const flatbuffers::Vector<int32_t>* v) {
    if (!v) return {};
    Charge(sizeof(int32_t) * uint64_t{v->size()});
    return {v->begin(), v->end()};
  }

  // Charges for each reference to a tensor what later passes copy per
  // reference (its name and shape).
  void ChargeRefs(const flatbuffers::Vector<int32_t>* v, const ir::Subgraph& g) {
    if (!v) return;
    for (int32_t t : *v) {
      uint64_t cost = kRefCost;
      if (t >= 0 && static_cast<size_t>(t) < g.tensors.size())
        cost += g.tensors[t].name.size() + 4 * g.tensors[t].shape.size();
      Charge(cost);
    }
  }

  ir::Subgraph ReadSubgraph(flatbuffers::uoffset_t index, ir::Model* out) {
    const tfl::SubGraph* sg = model_->subgraphs()->Get(index);
    NoteUnknownFields(sg, tfl::SubGraphTypeTable(), out);
    ir::Subgraph g;
    Charge(sizeof(ir::Subgraph) + Size(sg->name()));
    if (sg->name()) g.name = sg->name()->str();
    if (g.name.empty()) g.name = fmt::format("subgraph{}", index);
    if (sg->tensors())
      for (flatbuffers::uoffset_t t = 0; t < sg->tensors()->size(); ++t)
        g.tensors.push_back(ReadTensor(sg->tensors()->Get(t), g.name, t, out));
    g.debug_metadata_index = sg->debug_metadata_index();
    g.inputs = Indices(sg->inputs());
    g.outputs = Indices(sg->outputs());
    ChargeRefs(sg->inputs(), g);
    ChargeRefs(sg->outputs(), g);
    if (sg->operators())
      for (flatbuffers::uoffset_t o = 0; o < sg->operators()->size(); ++o)
        g.ops.push_back(ReadOperator(sg->operators()->Get(o), g, o, out));
    return g;
  }

  ir::Tensor ReadTensor(const tfl::Tensor* t, const std::string& sg, uint32_t index, ir::Model* out) {
    NoteUnknownFields(t, tfl::TensorTypeTable(), out);
    Charge(sizeof(ir::Tensor) + Size(t->name()) + 4 * (Size(t->shape()) + Size(t->shape_signature())));
    ir::Tensor tensor;
    if (t->name()) tensor.name = t->name()->str();
    const std::string who = fmt::format("subgraph '{}' tensor {} ('{}')", sg, index, tensor.name);
    if (t->type() < tfl::TensorType_MIN || t->type() > tfl::TensorType_MAX)
      Fail(fmt::format("{} has unknown type {}", who, static_cast<int>(t->type())));
    tensor.dtype = t->type();
    if (t->shape()) tensor.shape.assign(t->shape()->begin(), t->shape()->end());
    if (t->shape_signature()) tensor.shape_signature.assign(t->shape_signature()->begin(), t->shape_signature()->end());
    tensor.is_variable = t->is_variable();
    tensor.has_rank = t->has_rank();
    for (int32_t d : tensor.shape)
      if (d < 0) Fail(fmt::format("{} has negative dimension {} in its shape", who, d));
    if (const auto* q = t->quantization()) {
      NoteUnknownFields(q, tfl::QuantizationParametersTypeTable(), out);
      Charge(4 * (Size(q->scale()) + Size(q->min()) + Size(q->max())) + 8 * Size(q->zero_point()));
      if (q->scale()) tensor.quant.scale.assign(q->scale()->begin(), q->scale()->end());
      if (q->zero_point()) {
        CheckAligned8(q->zero_point()->Data(), who + " zero_point");
        tensor.quant.zero_point.assign(q->zero_point()->begin(), q->zero_point()->end());
      }
      if (q->min()) tensor.quant.min.assign(q->min()->begin(), q->min()->end());
      if (q->max()) tensor.quant.max.assign(q->max()->begin(), q->max()->end());
      tensor.quant.quantized_dimension = q->quantized_dimension();
      if (q->details_type() != tfl::QuantizationDetails_NONE)
        NoteUnpreservable(out, fmt::format("{} has custom quantization details", who));
    }
    if (const auto* s = t->sparsity()) {
      CheckSparsity(s, who);
      tensor.sparsity.emplace();
      s->UnPackTo(&*tensor.sparsity);
    }
    if (t->external_buffer() != 0)
      NoteUnpreservable(out, fmt::format("{} keeps its data in external buffer {}", who, t->external_buffer()));
    if (t->variant_tensors() && t->variant_tensors()->size() > 0)
      NoteUnpreservable(out, fmt::format("{} has variant sub-tensors", who));
    const Bytes& data = BufferAt(t->buffer(), who);
    if (!data.empty()) tensor.data = data;
    return tensor;
  }

  ir::Op ReadOperator(const tfl::Operator* o, const ir::Subgraph& g, uint32_t index, ir::Model* out) {
    const std::string& sg = g.name;
    NoteUnknownFields(o, tfl::OperatorTypeTable(), out);
    Charge(sizeof(ir::Op) + Size(o->mutating_variable_inputs()) + Size(o->custom_options()));
    ChargeRefs(o->inputs(), g);
    ChargeRefs(o->outputs(), g);
    if (o->opcode_index() >= op_codes_.size())
      Fail(fmt::format("subgraph '{}' op {} uses operator code {} but the model has {}", sg, index, o->opcode_index(),
                       op_codes_.size()));
    const OpCode& oc = op_codes_[o->opcode_index()];
    ir::Op op;
    op.code = oc.code;
    op.custom_code = oc.custom_code;
    op.version = oc.version;
    op.inputs = Indices(o->inputs());
    op.outputs = Indices(o->outputs());
    op.intermediates = Indices(o->intermediates());
    op.debug_metadata_index = o->debug_metadata_index();
    if (o->mutating_variable_inputs())
      for (auto b : *o->mutating_variable_inputs()) op.mutating_variable_inputs.push_back(b != 0);
    const std::string who = fmt::format("subgraph '{}' op {} ({})", sg, index, op.name());

    if (o->builtin_options_type() != tfl::BuiltinOptions_NONE) {
      if (o->builtin_options_type() > tfl::BuiltinOptions_MAX) {
        NoteUnpreservable(out, fmt::format("{} has builtin options of unknown type {}", who,
                                           static_cast<int>(o->builtin_options_type())));
      } else {
        // The verifier accepts a union type without its table; unpacking
        // that would dereference null.
        if (!o->builtin_options())
          Fail(fmt::format("{} has builtin options of type {} but no options table", who,
                           tfl::EnumNameBuiltinOptions(o->builtin_options_type())));
        std::string field = UnknownOptionField(o->builtin_options(), o->builtin_options_type());
        if (!field.empty()) NoteUnpreservable(out, fmt::format("{} options: unknown field {}", who, field));
        Charge(CheckOptions(o->builtin_options(),
                            OptionsTypeTable(tfl::BuiltinOptionsTypeTable(), o->builtin_options_type()), who));
        op.options.type = o->builtin_options_type();
        op.options.value = tfl::BuiltinOptionsUnion::UnPack(o->builtin_options(), o->builtin_options_type(), nullptr);
      }
    }
    if (o->builtin_options_2_type() != tfl::BuiltinOptions2_NONE) {
      if (o->builtin_options_2_type() > tfl::BuiltinOptions2_MAX) {
        NoteUnpreservable(out, fmt::format("{} has builtin options (2) of unknown type {}", who,
                                           static_cast<int>(o->builtin_options_2_type())));
      } else {
        if (!o->builtin_options_2())
          Fail(fmt::format("{} has builtin options (2) of type {} but no options table", who,
                           tfl::EnumNameBuiltinOptions2(o->builtin_options_2_type())));
        std::string field = UnknownOption2Field(o->builtin_options_2(), o->builtin_options_2_type());
        if (!field.empty()) NoteUnpreservable(out, fmt::format("{} options: unknown field {}", who, field));
        Charge(CheckOptions(o->builtin_options_2(),
                            OptionsTypeTable(tfl::BuiltinOptions2TypeTable(), o->builtin_options_2_type()), who));
        op.options2.type = o->builtin_options_2_type();
        op.options2.value =
            tfl::BuiltinOptions2Union::UnPack(o->builtin_options_2(), o->builtin_options_2_type(), nullptr);
      }
    }
    op.custom_options_format = o->custom_options_format();
    if (o->custom_options()) {
      op.custom_options.assign(o->custom_options()->begin(), o->custom_options()->end());
    } else if (o->large_custom_options_offset() > 1) {
      const uint64_t offset = o->large_custom_options_offset(), size = o->large_custom_options_size();
      if (offset > bytes_.size() || size > bytes_.size() - offset)
        Fail(fmt::format("{} custom options lie outside the file (offset {}, size {})", who, offset, size));
      Charge(size);
      op.custom_options.assign(bytes_.data() + offset, bytes_.data() + offset + size);
    }
    return op;
  }

  void ReadMetadata(ir::Model* out) {
    if (const auto* list = model_->metadata()) {
      for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
        const tfl::Metadata* m = list->Get(i);
        NoteUnknownFields(m, tfl::MetadataTypeTable(), out);
        Charge(sizeof(ir::Metadata) + Size(m->name()));
        ir::Metadata md;
        if (m->name()) md.name = m->name()->str();
        md.data = BufferAt(m->buffer(), fmt::format("metadata '{}'", md.name));
        out->metadata.push_back(std::move(md));
      }
    }
    if (const auto* list = model_->metadata_buffer())
      for (int32_t b : *list) {
        Charge(sizeof(Bytes));
        if (b < 0) Fail(fmt::format("metadata_buffer lists negative buffer {}", b));
        out->metadata_buffers.push_back(BufferAt(static_cast<uint32_t>(b), "metadata_buffer"));
      }
  }

  void ReadSignatures(ir::Model* out) {
    const auto* list = model_->signature_defs();
    if (!list) return;
    for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
      const tfl::SignatureDef* s = list->Get(i);
      NoteUnknownFields(s, tfl::SignatureDefTypeTable(), out);
      Charge(sizeof(ir::SignatureDef) + Size(s->signature_key()));
      ir::SignatureDef sig;
      if (s->signature_key()) sig.key = s->signature_key()->str();
      sig.subgraph = static_cast<int32_t>(s->subgraph_index());
      auto read_maps = [&](const flatbuffers::Vector<flatbuffers::Offset<tfl::TensorMap>>* maps,
                           std::vector<ir::TensorRef>* refs) {
        if (!maps) return;
        for (const tfl::TensorMap* m : *maps) {
          NoteUnknownFields(m, tfl::TensorMapTypeTable(), out);
          Charge(sizeof(ir::TensorRef) + kRefCost + Size(m->name()));
          refs->push_back({m->name() ? m->name()->str() : std::string(), static_cast<int32_t>(m->tensor_index())});
        }
      };
      read_maps(s->inputs(), &sig.inputs);
      read_maps(s->outputs(), &sig.outputs);
      out->signatures.push_back(std::move(sig));
    }
  }

  struct OpCode {
    tfl::BuiltinOperator code;
    std::string custom_code;
    int32_t version;
  };

  Bytes bytes_;
  std::string source_;
  const tfl::Model* model_ = nullptr;
  std::vector<Bytes> buffers_;
  std::vector<OpCode> op_codes_;
  std::unordered_set<std::string> noted_;
  uint64_t charged_ = 0;
  uint64_t budget_;
};

}  // namespace

ir::Model ReadModelBytes(Bytes bytes, const std::string& source) {
  // The verifier checks alignment relative to the buffer's start; make that
  // the real alignment (maps and heap blocks already are aligned).
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 16 != 0) bytes = Bytes::Copy(bytes.span());
  return Reader(std::move(bytes), source).Read();
}

ir::Model ReadModel(const std::string& path) { return ReadModelBytes(MapFile(path), path); }

}  // namespace gpuclean::format
