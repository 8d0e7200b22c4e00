#include "catalog/precision.h"

#include <algorithm>
#include <cctype>

namespace infereng::catalog {

Result<Precision> ParsePrecision(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "bf16" || s == "bfloat16" || s == "fp16" || s == "float16" || s == "half" ||
      s == "auto") {
    return Precision::kBf16;
  }
  if (s == "fp8" || s == "float8" || s == "fp8_e4m3" || s == "e4m3") return Precision::kFp8;
  if (s == "int8" || s == "w8a8") return Precision::kInt8;
  if (s == "int4" || s == "awq" || s == "gptq" || s == "w4a16") return Precision::kInt4;
  if (s == "fp4" || s == "nvfp4") return Precision::kFp4;
  return Status::InvalidArgument("unknown precision \"" + std::string(text) +
                                 "\" (expected bf16, fp8, int8, int4 or fp4)");
}

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
    case Precision::kInt8: return "int8";
    case Precision::kInt4: return "int4";
    case Precision::kFp4: return "fp4";
  }
  return "?";
}

double WeightBitsPerParam(Precision p) {
  switch (p) {
    case Precision::kBf16: return 16;
    case Precision::kFp8: return 8;
    case Precision::kInt8: return 8;
    case Precision::kInt4: return 4 + 16.0 / 128;
    case Precision::kFp4: return 4 + 8.0 / 16;
  }
  return 16;
}

double KvBytesPerElement(Precision p) {
  switch (p) {
    case Precision::kBf16: return 2;
    case Precision::kFp8:
    case Precision::kInt8: return 1;
    case Precision::kInt4:
    case Precision::kFp4: return 0.5;
  }
  return 2;
}

}  // namespace infereng::catalog
