// Internal to card/: the parsers of the card's sections, split by file so each stays
// readable (traffic_parser.cc: traffic, arrivals, distributions, prefixes; card_parser.cc:
// the rest and the top level; card_validate.cc: ranges and cross-field checks).
#pragma once

#include <string>
#include <vector>

#include "card/card.h"
#include "card/field_reader.h"
#include "core/status.h"

namespace infereng::card {

// `base_dir` resolves relative file references (traces, empirical length files).
Status ParseTraffic(FieldReader& r, const YAML::Node& node, const std::string& path,
                    const std::string& base_dir, TrafficSpec* out);

// A length distribution: a plain number (fixed) or {KIND: ..., min: N, max: N}.
Status ParseDistribution(FieldReader& r, const YAML::Node& node, const std::string& path,
                         const std::string& base_dir, const std::string& default_field, Distribution* out);

// Loads an empirical sample file: one number per line ('#' comments, blank lines skipped),
// or, when `field` is set, JSONL objects whose `field` holds the number.
Result<std::vector<double>> LoadEmpiricalSamples(const std::string& file, const std::string& field);

// `file` if absolute (or base_dir empty), else base_dir/file.
std::string ResolvePath(const std::string& base_dir, const std::string& file);

}  // namespace infereng::card
