// Vision inputs end to end: bench sends chat requests with PNG image parts to the embedded
// engine on 127.0.0.1 (the twin with a LinearCostModel behind it), the records carry the
// images and their tokens, usage.prompt_tokens counts them, and TTFT grows by what the twin
// predicts for the image tokens' prefill and the encoder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "card/card_parser.h"
#include "job/bench_job.h"
#include "metrics/derive.h"
#include "metrics/records_io.h"
#include "metrics/summary_table.h"
#include "report/report.h"
#include "testing/embedded_server.h"
#include "testing/paths.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

card::WorkloadCard Card() {
  Result<card::WorkloadCard> c = card::ParseCard(R"(name: vision
traffic:
  concurrency: 1
  input_tokens: 32
  output_tokens: 4
  images: {width: 64, height: 48, share: 0.5}
model:
  id: vlm
  vision: {tokens_per_image: 576, encoder_params: 1e8}
bench: {warmup: 0s, seed: 5}
)",
                                                 "vision.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

// The twin's step: 2 ms + 20 us per prefill token + 0.1 ms per encoder GFLOP. One user at a
// time (closed loop), so each prefill runs alone: without images 2 + 32 x 0.02 = 2.64 ms;
// with one image 2 + 608 x 0.02 + 2 x 1e8 x 576 x 1e-13 s = 2 + 12.16 + 11.52 = 25.68 ms.
constexpr double kPrefillText = 2.64, kPrefillImage = 25.68;

TEST(BenchVision, ImagesAreSentCountedAndCostWhatTheTwinPredicts) {
  twin::TwinSetup setup =
      testing::LinearTwin({.fixed_s = 0.002, .per_prefill_token_s = 20e-6, .per_encoder_gflop_s = 1e-4});
  const card::WorkloadCard card = Card();
  setup.vision = card.model.vision;
  serve::ServerOptions so;
  so.model_name = "vlm";
  testing::EmbeddedServer server(so, setup);
  ASSERT_TRUE(server.started());

  bench::BenchOptions o;
  o.target = server.url();
  o.card = card;
  o.requests = 40;
  o.warmup = 0;
  o.out_dir = testing::ScratchPath("bench-vision");
  fs::remove_all(o.out_dir);
  Result<bench::BenchResult> r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const metrics::Summary& s = r->summary;
  ASSERT_EQ(s.counts.succeeded, 40) << r->first_error;

  Result<std::vector<metrics::RequestRecord>> records = metrics::ReadRecordsFile(o.out_dir + "/requests.jsonl");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  int64_t with = 0, images = 0;
  double ttft_with = 0, ttft_without = 0;
  for (const metrics::RequestRecord& rec : *records) {
    ASSERT_TRUE(rec.images == 0 || rec.images == 1) << rec.id;
    EXPECT_EQ(rec.image_tokens, 576 * rec.images) << rec.id;
    EXPECT_EQ(rec.prompt_tokens, 32 + rec.image_tokens) << rec.id;  // the server counted the image exactly
    // The engine's own prefill time (its `timings`, engine time = wall time here), to the
    // microsecond the server prints.
    EXPECT_NEAR(NanosToMillis(rec.server_prefill), rec.images ? kPrefillImage : kPrefillText, 0.002) << rec.id;
    const double ttft = *metrics::DeriveRequest(rec).ttft_ms;
    (rec.images ? ttft_with : ttft_without) += ttft;
    with += rec.images > 0;
    images += rec.images;
  }
  ASSERT_GT(with, 5);
  ASSERT_LT(with, 35);
  ttft_with /= static_cast<double>(with);
  ttft_without /= static_cast<double>(40 - with);
  // The client's TTFT grows by the predicted 23.04 ms; the rest (HTTP, JSON, the image's
  // base64, loopback) is the same order for both kinds and within 3 ms of each other.
  EXPECT_NEAR(ttft_with - ttft_without, kPrefillImage - kPrefillText, 3.0)
      << "with images " << ttft_with << " ms, without " << ttft_without << " ms";

  ASSERT_TRUE(s.vision.has_value());
  EXPECT_EQ(s.vision->requests, with);
  EXPECT_EQ(s.vision->images, images);
  EXPECT_EQ(s.vision->image_tokens, 576 * images);
  EXPECT_GT(s.vision->images_per_s, 0);
  EXPECT_TRUE(r->summary_json.contains("vision"));
  const std::string table = metrics::FormatSummaryTable(s, {.show_boundaries = false});
  EXPECT_NE(table.find("vision: " + std::to_string(with) + " requests with images"), std::string::npos) << table;
  ASSERT_TRUE(report::WriteReport(o.out_dir).ok());
  std::ifstream report(o.out_dir + "/report.html");
  std::stringstream html;
  html << report.rdbuf();
  EXPECT_NE(html.str().find("Vision inputs"), std::string::npos);
  fs::remove_all(o.out_dir);

  // Image parts exist only in chat messages: the completions endpoint is refused up front.
  o.endpoint = "completions";
  Result<bench::BenchResult> refused = RunBench(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("traffic.images: images go only on the chat endpoint"), std::string::npos)
      << refused.status().ToString();
  fs::remove_all(o.out_dir);
}

}  // namespace
}  // namespace infereng::job
