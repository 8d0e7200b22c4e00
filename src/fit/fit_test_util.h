// Test helper for src/fit tests: a Deployment from catalog names.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "fit/deployment.h"

namespace infereng::fit::test {

inline const catalog::Catalog& Builtin() {
  static const catalog::Catalog c = catalog::Catalog::Load().value_or(catalog::Catalog());
  return c;
}

inline Deployment Make(const std::string& model, const std::string& accel, int count = 1, int tp = 1,
                       Precision weights = Precision::kBf16) {
  Deployment d;
  auto m = Builtin().FindModel(model);
  auto a = Builtin().FindAccelerator(accel);
  EXPECT_TRUE(m.ok()) << model;
  EXPECT_TRUE(a.ok()) << accel;
  if (m.ok()) d.model = *m;
  if (a.ok()) d.accel = *a;
  d.count = count;
  d.tp = tp;
  d.weights = weights;
  EXPECT_TRUE(Validate(d).ok()) << Validate(d).ToString();
  return d;
}

}  // namespace infereng::fit::test
