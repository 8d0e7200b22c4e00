// CharacterizeFile: a trace file read, hashed and characterised in one pass.
#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "trace/characterization.h"
#include "trace/reader.h"

namespace infereng::trace {
namespace {

Result<std::string> Sha256OfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return Status::Internal("sha256 init failed");
  std::vector<char> buf(1 << 16);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return Status::IoError(path + ": read error");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  std::string hex;
  char b[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(b, sizeof b, "%02x", digest[i]);
    hex += b;
  }
  return hex;
}

}  // namespace

Result<Characterization> CharacterizeFile(const std::string& path, const ReaderOptions& reader_options,
                                          const CharacterizeOptions& options) {
  INFERENG_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path, reader_options));
  Characterizer acc(options);
  TraceRecord r;
  for (;;) {
    INFERENG_ASSIGN_OR_RETURN(bool more, reader->Next(&r));
    if (!more) break;
    if (Status s = acc.Add(r); !s.ok()) return Status::InvalidArgument(path + s.message());
  }
  auto c = acc.Finish();
  if (!c.ok()) return Status::InvalidArgument(path + ": " + c.status().message());
  c->path = path;
  c->format = std::string(FormatName(reader->format()));
  c->time_unit = std::string(TimeUnitName(reader->time_unit()));
  c->absolute_time = reader->time_unit() == TimeUnit::kDatetime;
  INFERENG_ASSIGN_OR_RETURN(c->sha256, Sha256OfFile(path));
  return c;
}

}  // namespace infereng::trace
