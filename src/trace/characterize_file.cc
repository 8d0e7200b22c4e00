// CharacterizeFile: a trace file read, hashed and characterised in one pass.
#include <memory>

#include "trace/characterization.h"
#include "trace/reader.h"
#include "trace/replay.h"

namespace infereng::trace {

Result<Characterization> CharacterizeFile(const std::string& path, const ReaderOptions& reader_options,
                                          const CharacterizeOptions& options) {
  INFERENG_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path, reader_options));
  CharacterizeOptions with = options;
  // No session column: conversations are inferred from hash_ids where the records have them.
  with.infer_sessions = reader->columns().session.empty();
  Characterizer acc(with);
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
