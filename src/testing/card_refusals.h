// Table tests of card refusals: every YAML in the table must be refused as InvalidArgument
// whose message names FILE:LINE: field (`location`) and says why (`detail`). The card
// tests of each modality share it.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "card/card_parser.h"

namespace infereng::testing {

struct CardRefusal {
  std::string yaml;
  const char* location;
  const char* detail;
};

// Parses each card as `file` and checks the refusal.
inline void ExpectCardsRefused(const std::vector<CardRefusal>& cases, const std::string& file) {
  for (const CardRefusal& c : cases) {
    auto card = card::ParseCard(c.yaml, file);
    ASSERT_FALSE(card.ok()) << c.yaml;
    EXPECT_EQ(card.status().code(), Status::Code::kInvalidArgument) << c.yaml;
    EXPECT_THAT(card.status().message(), ::testing::HasSubstr(c.location)) << c.yaml;
    EXPECT_THAT(card.status().message(), ::testing::HasSubstr(c.detail)) << c.yaml;
  }
}

}  // namespace infereng::testing
