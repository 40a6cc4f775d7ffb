// TFRecord framing of event files (Note [event files] in eagerflow/io/summary.h).
// Internal to src/io.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ef::io::detail {

// CRC32C masked as TFRecord stores it: rotated right by 15 bits plus a constant, so
// that the CRC of data holding CRCs is not degenerate.
uint32_t masked_crc32c(const void* data, size_t size);

// Appends one record holding `payload` to `out`.
void append_record(std::string& out, std::string_view payload);

// Splits the content of a record file into its payloads, checking the length and data
// CRCs of each; a damaged or truncated record is a DataLossError naming `path` and the
// record's byte offset.
std::vector<std::string> split_records(std::string_view content, const std::string& path);

}  // namespace ef::io::detail
