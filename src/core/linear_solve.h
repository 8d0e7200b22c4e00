// SolveLinear: a small dense linear system A x = b, for the fits that need one (calibrate's
// Gauss-Newton steps and standard errors, the measured table's least-squares attention
// rate). Gaussian elimination with partial pivoting; sizes are a handful of unknowns, so no
// library is pulled for it. Pure function.
#pragma once

#include <vector>

namespace infereng {

// Solves A x = b (A square, n x n with n = b.size()); false when A is singular.
bool SolveLinear(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>* x);

}  // namespace infereng
