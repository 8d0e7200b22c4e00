#include "catalog/accelerator_spec.h"

namespace infereng::catalog {

double AcceleratorSpec::PeakFlops(Precision weights) const {
  switch (weights) {
    case Precision::kBf16:
    case Precision::kInt4: return flops_bf16;
    case Precision::kFp8: return flops_fp8 > 0 ? flops_fp8 : flops_bf16;
    case Precision::kInt8: return flops_int8 > 0 ? flops_int8 : flops_bf16;
    case Precision::kFp4: return flops_fp4 > 0 ? flops_fp4 : flops_bf16;
  }
  return flops_bf16;
}

}  // namespace infereng::catalog
