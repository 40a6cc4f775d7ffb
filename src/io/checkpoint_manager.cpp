// CheckpointManager: numbered checkpoints in a folder, the newest N kept.
#include <algorithm>
#include <charconv>
#include <filesystem>

#include "eagerflow/io/checkpoint.h"

namespace ef::io {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".safetensors";

// n for "ckpt-<n>.safetensors" (digits only, no sign or leading '+'), else nothing.
std::optional<int64_t> number_of(const std::string& filename) {
  if (!filename.starts_with(kPrefix) || !filename.ends_with(kSuffix)) return std::nullopt;
  const char* begin = filename.data() + kPrefix.size();
  const char* end = filename.data() + filename.size() - kSuffix.size();
  if (begin == end || *begin == '-' || *begin == '+') return std::nullopt;
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return n;
}

// (number, path) of every checkpoint in `directory`, oldest (smallest number) first.
std::vector<std::pair<int64_t, std::string>> list(const std::string& directory) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec))
    if (auto n = number_of(entry.path().filename().string()); n && entry.is_regular_file(ec))
      out.emplace_back(*n, entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

CheckpointManager::CheckpointManager(Checkpoint& checkpoint, std::string directory, int max_to_keep, CallSite where)
    : checkpoint_(checkpoint), directory_(std::move(directory)), max_to_keep_(max_to_keep) {
  try {
    if (max_to_keep < 0) fail("CheckpointManager: max_to_keep must be >= 0 (0 keeps all), got ", max_to_keep);
    if (directory_.empty()) fail("CheckpointManager: the directory is empty");
    std::error_code ec;
    fs::create_directories(directory_, ec);
    if (ec) fail<FailedPreconditionError>("CheckpointManager: cannot create '", directory_, "': ", ec.message());
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::string CheckpointManager::save(CallSite where) {
  try {
    auto existing = list(directory_);
    const int64_t n = existing.empty() ? 1 : existing.back().first + 1;
    const std::string path = (fs::path(directory_) / (std::string(kPrefix) + std::to_string(n) + std::string(kSuffix))).string();
    checkpoint_.save(path, where);
    existing.emplace_back(n, path);
    if (max_to_keep_ > 0)
      for (size_t i = 0; i + static_cast<size_t>(max_to_keep_) < existing.size(); ++i) {
        std::error_code ec;
        fs::remove(existing[i].second, ec);  // a file already gone is fine
      }
    return path;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::optional<std::string> CheckpointManager::latest_checkpoint() const {
  auto existing = list(directory_);
  if (existing.empty()) return std::nullopt;
  return existing.back().second;
}

std::vector<std::string> CheckpointManager::checkpoints() const {
  std::vector<std::string> out;
  for (auto& [n, path] : list(directory_)) out.push_back(std::move(path));
  return out;
}

}  // namespace ef::io
