// The transcription request's parts: multipart framing (RFC 7578), the audio header (WAV,
// FLAC) and the form fields, each refusal naming what was wrong.
#include "serve/transcription_request.h"

#include <gtest/gtest.h>

#include "bench/request_body.h"
#include "bench/wav_audio.h"

namespace infereng::serve {
namespace {

// A FLAC file's first 42 bytes: fLaC, STREAMINFO (last block, 34 bytes) with `rate` Hz,
// `channels` and `frames` total samples.
std::string Flac(int64_t rate, int channels, int64_t frames) {
  std::string s = "fLaC";
  s += std::string("\x80\x00\x00\x22", 4);  // last-metadata-block flag, type 0, length 34
  std::string info(34, '\0');
  info[10] = static_cast<char>(rate >> 12);
  info[11] = static_cast<char>(rate >> 4);
  info[12] = static_cast<char>(((rate & 0xF) << 4) | ((channels - 1) << 1));
  info[13] = static_cast<char>((15 << 4) | ((frames >> 32) & 0xF));  // 16 bits per sample
  for (int k = 0; k < 4; ++k) info[static_cast<std::size_t>(14 + k)] = static_cast<char>(frames >> (24 - 8 * k));
  return s + info;
}

TEST(AudioInfo, WavAndFlacLengthsComeFromTheirHeaders) {
  Result<AudioInfo> wav = ReadAudioInfo(bench::SyntheticWav(12'345, 7));
  ASSERT_TRUE(wav.ok()) << wav.status().ToString();
  EXPECT_EQ(wav->format, "wav");
  EXPECT_EQ(wav->sample_rate, 16'000);
  EXPECT_EQ(wav->channels, 1);
  EXPECT_EQ(wav->frames, 12'345 * 16);
  EXPECT_EQ(wav->duration_ms, 12'345);

  Result<AudioInfo> flac = ReadAudioInfo(Flac(44'100, 2, 44'100 * 3 + 22'050));
  ASSERT_TRUE(flac.ok()) << flac.status().ToString();
  EXPECT_EQ(flac->format, "flac");
  EXPECT_EQ(flac->sample_rate, 44'100);
  EXPECT_EQ(flac->channels, 2);
  EXPECT_EQ(flac->duration_ms, 3'500);

  // A streaming writer's 0xFFFFFFFF data size: the rest of the file is the data.
  std::string streamed = bench::SyntheticWav(1'000, 1);
  for (int k = 40; k < 44; ++k) streamed[static_cast<std::size_t>(k)] = '\xff';
  ASSERT_TRUE(ReadAudioInfo(streamed).ok());
  EXPECT_EQ(ReadAudioInfo(streamed)->duration_ms, 1'000);

  std::string truncated = bench::SyntheticWav(1'000, 1);
  truncated.resize(truncated.size() / 2);
  const std::pair<std::string, std::string> refused[] = {
      {truncated, "truncated: the data chunk says 32000 bytes, 15978 are present"},
      {std::string("ID3\x04\x00\x00\x00\x00\x00\x00\x00\x00", 12), "the file is MP3"},
      {"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00", "the file is Ogg"},
      {std::string("\x00\x00\x00\x20" "ftypM4A ", 12), "the file is MP4/M4A"},
      {"hello", "too short to be audio"},
      {"just some text, not audio at all", "not WAV (RIFF/WAVE) or FLAC"},
      {Flac(16'000, 1, 0), "no total sample count"},
      {Flac(0, 1, 10), "a sample rate of 0 Hz"},
      {std::string("RIFF\x04\x00\x00\x00WAVE", 12), "no fmt chunk"},
  };
  for (const auto& [bytes, why] : refused) {
    Result<AudioInfo> r = ReadAudioInfo(bytes);
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
}

TEST(Multipart, PartsRoundTripWhatBenchSends) {
  bench::BodyOptions opt;
  opt.model = "m";
  opt.caps.continuous_usage = true;
  const std::string wav = bench::SyntheticWav(250, 3);
  const bench::MultipartBody mb = bench::BuildTranscriptionBody(opt, wav, 77);
  Result<std::string> boundary = MultipartBoundary(mb.content_type);
  ASSERT_TRUE(boundary.ok()) << boundary.status().ToString();
  EXPECT_EQ(wav.find(*boundary), std::string::npos);
  Result<std::vector<FormPart>> parts = ParseMultipart(mb.body, *boundary);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  std::vector<std::pair<std::string, std::string>> got;
  for (const FormPart& p : *parts) got.emplace_back(p.name, p.name == "file" ? p.filename + "|" + p.content_type : std::string(p.data));
  const std::vector<std::pair<std::string, std::string>> want = {
      {"file", "clip.wav|audio/wav"}, {"model", "m"}, {"response_format", "json"}, {"stream", "true"},
      {"stream_include_usage", "true"}, {"stream_continuous_usage_stats", "true"}, {"max_completion_tokens", "77"}};
  EXPECT_EQ(got, want);
  EXPECT_EQ((*parts)[0].data, wav);  // byte for byte

  // Quoted boundary with a preamble, a part without Content-Type, the close delimiter.
  Result<std::string> quoted = MultipartBoundary("Multipart/Form-Data; charset=utf-8; boundary=\"a;b\"");
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(*quoted, "a;b");
  const std::string body = "preamble\r\n--a;b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv1\r\n--a;b--\r\n";
  Result<std::vector<FormPart>> one = ParseMultipart(body, "a;b");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].data, "v1");
}

TEST(Multipart, MalformedBodiesAreRefusedNamingWhere) {
  EXPECT_NE(MultipartBoundary("application/json").status().message().find("must be multipart/form-data"), std::string::npos);
  EXPECT_NE(MultipartBoundary("multipart/form-data").status().message().find("without a boundary"), std::string::npos);
  const std::pair<std::string, std::string> refused[] = {
      {"no delimiter here", "no boundary delimiter"},
      {"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nvalue", "does not end with the boundary"},
      {"--b\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--", "without Content-Disposition"},
      {"--b\r\nContent-Disposition: attachment; name=\"x\"\r\n\r\nv\r\n--b--", "is not form-data"},
      {"--bX\r\n", "expected CRLF after the boundary"},
      {"--b\r\nContent-Disposition: form-data; name=\"x\"", "do not end (CRLF CRLF)"},
  };
  for (const auto& [body, why] : refused) {
    Result<std::vector<FormPart>> r = ParseMultipart(body, "b");
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
  std::string many;
  for (int k = 0; k < 65; ++k) many += "--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n";
  many += "--b--\r\n";
  EXPECT_NE(ParseMultipart(many, "b").status().message().find("more than 64 parts"), std::string::npos);
}

std::string Form(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& wav) {
  std::string b;
  if (!wav.empty()) b += "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n" + wav + "\r\n";
  for (const auto& [k, v] : fields) b += "--B\r\nContent-Disposition: form-data; name=\"" + k + "\"\r\n\r\n" + v + "\r\n";
  return b + "--B--\r\n";
}

TEST(TranscriptionRequest, FieldsAreReadAndMistakesNamed) {
  const ParseLimits limits{.model_name = "whisper"};
  const std::string wav = bench::SyntheticWav(2'000, 1);
  const std::string ct = "multipart/form-data; boundary=B";
  TranscriptionOutcome ok = ParseTranscriptionRequest(
      ct, Form({{"model", "whisper"}, {"prompt", "two words"}, {"stream", "true"}, {"stream_include_usage", "true"},
                {"response_format", "verbose_json"}, {"max_completion_tokens", "9"}, {"temperature", "0.2"},
                {"timestamp_granularities[]", "segment"}, {"unknown_field", "ignored"}},
               wav),
      limits, 600'000);
  ASSERT_FALSE(ok.error) << ok.error->ToJson();
  EXPECT_EQ(ok.params.audio.duration_ms, 2'000);
  EXPECT_EQ(ok.params.prompt_ids.size(), 2u);
  EXPECT_TRUE(ok.params.stream);
  EXPECT_TRUE(ok.params.include_usage);
  EXPECT_EQ(ok.params.response_format, "verbose_json");
  EXPECT_EQ(ok.params.max_completion_tokens, 9);

  struct Case {
    std::string content_type, body, param, why;
    int status = 400;
  };
  const Case cases[] = {
      {"application/json", "{}", "", "must be multipart/form-data"},
      {ct, Form({{"model", "whisper"}}, ""), "file", "the file part (the audio to transcribe) is missing"},
      {ct, Form({{"model", "other"}}, wav), "model", "does not exist", 404},
      {ct, Form({{"response_format", "srt"}}, wav), "response_format", "not served by the embedded engine"},
      {ct, Form({{"response_format", "yaml"}}, wav), "response_format", "json, text or verbose_json"},
      {ct, Form({{"stream", "maybe"}}, wav), "stream", "must be true or false"},
      {ct, Form({{"stream_include_usage", "true"}}, wav), "stream_include_usage", "only be defined when `stream=True`"},
      {ct, Form({{"max_completion_tokens", "0"}}, wav), "max_completion_tokens", "at least 1"},
      {ct, Form({{"temperature", "hot"}}, wav), "temperature", "between 0 and 2"},
      {ct, Form({}, "OggS0000000000"), "file", "the file is Ogg"},
      {ct, Form({}, bench::SyntheticWav(3'000, 1)), "file", "at most 2 s are served"},
  };
  for (const Case& c : cases) {
    TranscriptionOutcome r = ParseTranscriptionRequest(c.content_type, c.body, limits, c.why.find("at most 2") != std::string::npos ? 2'000 : 600'000);
    ASSERT_TRUE(r.error) << c.why;
    EXPECT_EQ(r.error->http_status, c.status) << c.why;
    EXPECT_EQ(r.error->param, c.param) << c.why;
    EXPECT_NE(r.error->message.find(c.why), std::string::npos) << r.error->message;
  }
}

}  // namespace
}  // namespace infereng::serve
