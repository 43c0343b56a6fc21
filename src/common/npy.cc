#include "gpuclean/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "gpuclean/error.h"
#include "gpuclean/io.h"

namespace gpuclean::npy {
namespace {

struct DescrEntry {
  const char* descr;
  ir::DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"<f4", tfl::TensorType_FLOAT32}, {"<f2", tfl::TensorType_FLOAT16}, {"<f8", tfl::TensorType_FLOAT64},
    {"<i4", tfl::TensorType_INT32},   {"<i8", tfl::TensorType_INT64},   {"<i2", tfl::TensorType_INT16},
    {"|i1", tfl::TensorType_INT8},    {"|u1", tfl::TensorType_UINT8},   {"<u2", tfl::TensorType_UINT16},
    {"<u4", tfl::TensorType_UINT32},  {"<u8", tfl::TensorType_UINT64},  {"|b1", tfl::TensorType_BOOL},
};

constexpr char kMagic[] = "\x93NUMPY";
constexpr int64_t kMaxElements = int64_t{1} << 36;

}  // namespace

int64_t Array::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string Descr(ir::DType dtype) {
  for (const auto& e : kDescrs)
    if (e.dtype == dtype) return e.descr;
  ThrowUnsupported(fmt::format("dtype {} has no .npy equivalent", ir::DTypeName(dtype)));
}

Array Parse(const uint8_t* bytes, size_t size, const std::string& source) {
  auto fail = [&](const std::string& what) -> void {
    ThrowBadInput(fmt::format("{}: not a valid .npy file: {}", source, what));
  };
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) fail("missing \\x93NUMPY magic");
  const int major = bytes[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) fail("truncated header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    fail(fmt::format("unsupported format version {}", major));
  }
  if (header_len > size - header_start) fail("truncated header");
  const std::string header(reinterpret_cast<const char*>(bytes + header_start), header_len);

  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')"))) fail("header has no 'descr'");
  const std::string descr = m[1];
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))")))
    fail("header has no 'fortran_order'");
  if (m[1] == "True") fail("Fortran-order arrays are not supported; save with np.ascontiguousarray");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) fail("header has no 'shape'");
  const std::string shape_text = m[1];

  Array array;
  bool known = false;
  for (const auto& e : kDescrs) {
    std::string alt = e.descr;
    if (alt[0] == '<') alt[0] = '=';
    if (descr == e.descr || descr == alt || (alt[0] == '|' && descr == std::string("<") + (e.descr + 1))) {
      array.dtype = e.dtype;
      known = true;
      break;
    }
  }
  if (!known) fail(fmt::format("dtype '{}' is not supported (little-endian numeric or bool only)", descr));

  std::regex dim(R"(\s*(-?\d+)\s*)");
  int64_t elements = 1;
  for (std::sregex_iterator it(shape_text.begin(), shape_text.end(), dim), end; it != end; ++it) {
    const std::string token = (*it)[1];
    if (token.size() > 12) fail("dimension too large");
    const int64_t d = std::stoll(token);
    if (d < 0) fail("negative dimension");
    if (d > 0 && elements > kMaxElements / d) fail("shape too large");
    elements *= d;
    array.shape.push_back(d);
  }
  const size_t need = static_cast<size_t>(elements) * ir::DTypeSize(array.dtype);
  const size_t data_start = header_start + header_len;
  if (size - data_start < need) fail(fmt::format("data truncated: {} bytes, shape needs {}", size - data_start, need));
  if (size - data_start > need) fail(fmt::format("{} trailing bytes after the data", size - data_start - need));
  array.data.assign(bytes + data_start, bytes + data_start + need);
  return array;
}

Array Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, fmt::format("{}: cannot open", path));
  // One read of the whole file: byte-wise stream iteration took a second of
  // every 1024x1024 proof.
  std::error_code ec;
  const uintmax_t size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  std::vector<uint8_t> bytes(ec ? 0 : static_cast<size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    throw Error(ErrorKind::kIo, fmt::format("{}: cannot read", path));
  return Parse(bytes.data(), bytes.size(), path);
}

std::vector<uint8_t> Encode(const Array& array) {
  std::string shape;
  for (size_t i = 0; i < array.shape.size(); ++i) shape += fmt::format("{}, ", array.shape[i]);
  if (array.shape.size() > 1) shape.resize(shape.size() - 2);
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", Descr(array.dtype), shape);
  // Pad so that the data starts on a 64-byte boundary, as numpy does.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

void Write(const std::string& path, const Array& array) { WriteFileAtomically(path, Encode(array)); }

}  // namespace gpuclean::npy
