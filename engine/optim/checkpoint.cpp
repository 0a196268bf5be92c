#include "engine/optim/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/dist/communicator.h"

namespace adj::optim {

static_assert(std::endian::native == std::endian::little, "checkpoint arrays are stored little-endian, as in memory");

namespace {

constexpr const char* kMagic = "ADJOINT-CHECKPOINT 1\n";

std::string hex(std::uint64_t h) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(h));
  return s;
}

}  // namespace

void Checkpoint::put_raw(const std::string& name, const char* type, const void* data, std::size_t count,
                         std::size_t size) {
  Array& a = arrays[name];
  a.type = type;
  a.count = count;
  const auto* p = static_cast<const std::uint8_t*>(data);
  a.bytes.assign(p, p + count * size);
}

template <class T>
Status Checkpoint::get_raw(const std::string& name, const char* type, std::vector<T>& v, long long count) const {
  auto it = arrays.find(name);
  if (it == arrays.end()) return error("no array '" + name + "' (a checkpoint of another method or version?)");
  const Array& a = it->second;
  if (a.type != type)
    return error("array '" + name + "' holds " + a.type + " values, this run needs " + type +
                 " (a run in another precision?)");
  if (count >= 0 && a.count != std::size_t(count))
    return error("array '" + name + "' holds " + std::to_string(a.count) + " values, this run has " +
                 std::to_string(count) + " (a different network shape, world or number of copies?)");
  v.resize(a.count);
  if (a.count) std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return Status::ok();
}

Status Checkpoint::get(const std::string& name, std::vector<float>& v, long long count) const {
  return get_raw(name, "f32", v, count);
}
Status Checkpoint::get(const std::string& name, std::vector<double>& v, long long count) const {
  return get_raw(name, "f64", v, count);
}
Status Checkpoint::get(const std::string& name, std::vector<std::uint64_t>& v, long long count) const {
  return get_raw(name, "u64", v, count);
}

Status Checkpoint::expect_run(const std::string& key, const nlohmann::json& value) const {
  const nlohmann::json* run = header.contains("run") ? &header["run"] : nullptr;
  if (!run || !run->contains(key)) return error("the header has no run." + key + " (not a checkpoint of this kind?)");
  if ((*run)[key] != value)
    return error("the checkpoint's " + key + " is " + (*run)[key].dump() + ", this run's is " + value.dump());
  return Status::ok();
}

Status Checkpoint::error(const std::string& what) const { return Status::error(file + ": " + what); }

std::vector<std::uint8_t> encode_checkpoint(const Checkpoint& ck) {
  nlohmann::json header = ck.header;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, a] : ck.arrays)
    list.push_back({{"name", name},
                    {"type", a.type},
                    {"count", a.count},
                    {"fnv1a", hex(dist::fnv1a(a.bytes.data(), a.bytes.size()))}});
  header["arrays"] = list;
  const std::string text = header.dump();
  std::string head = std::string(kMagic) + std::to_string(text.size()) + "\n" + text;
  std::vector<std::uint8_t> out(head.begin(), head.end());
  for (const auto& [name, a] : ck.arrays) out.insert(out.end(), a.bytes.begin(), a.bytes.end());
  return out;
}

Result<Checkpoint> decode_checkpoint(const std::vector<std::uint8_t>& bytes, const std::string& file) {
  Checkpoint ck;
  ck.file = file;
  const std::size_t magic = std::strlen(kMagic);
  if (bytes.size() < magic || std::memcmp(bytes.data(), kMagic, magic) != 0)
    return ck.error("not an Adjoint checkpoint (it does not start with '" + std::string(kMagic, magic - 1) + "')");
  std::size_t pos = magic, length = 0;
  while (pos < bytes.size() && bytes[pos] >= '0' && bytes[pos] <= '9' && length < (1u << 30))
    length = length * 10 + (bytes[pos++] - '0');
  if (pos >= bytes.size() || bytes[pos] != '\n' || length > bytes.size() - pos - 1)
    return ck.error("the header's length is missing or past the end of the file (truncated?)");
  ++pos;
  try {
    ck.header = nlohmann::json::parse(bytes.begin() + long(pos), bytes.begin() + long(pos + length));
  } catch (const nlohmann::json::exception& e) {
    return ck.error(std::string("the header is not JSON: ") + e.what());
  }
  pos += length;
  if (!ck.header.is_object() || !ck.header.contains("arrays") || !ck.header["arrays"].is_array())
    return ck.error("the header lists no arrays");
  for (const nlohmann::json& a : ck.header["arrays"]) {
    const std::string name = a.value("name", std::string()), type = a.value("type", std::string());
    const std::size_t size = type == "f32" ? 4 : (type == "f64" || type == "u64") ? 8 : 0;
    if (name.empty() || size == 0 || !a.contains("count") || !a["count"].is_number_unsigned())
      return ck.error("header.arrays: an entry without a name, a known type (f32, f64, u64) or a count: " + a.dump());
    const std::size_t count = a["count"].get<std::size_t>();
    if (count > (bytes.size() - pos) / size)
      return ck.error("array '" + name + "' runs past the end of the file (truncated?)");
    Checkpoint::Array& arr = ck.arrays[name];
    arr.type = type;
    arr.count = count;
    arr.bytes.assign(bytes.begin() + long(pos), bytes.begin() + long(pos + count * size));
    pos += count * size;
    if (hex(dist::fnv1a(arr.bytes.data(), arr.bytes.size())) != a.value("fnv1a", std::string()))
      return ck.error("array '" + name + "' does not match its hash (the file is corrupted)");
  }
  if (pos != bytes.size())
    return ck.error(std::to_string(bytes.size() - pos) + " bytes after the last array (the file is corrupted)");
  ck.header.erase("arrays");
  return ck;
}

Status write_checkpoint(const Checkpoint& ck, const std::string& path) {
  const std::vector<std::uint8_t> bytes = encode_checkpoint(ck);
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& what) {
    return Status::error(path + ": cannot write the checkpoint: " + what + " (" + std::strerror(errno) + ")");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create " + tmp);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return fail("writing " + tmp);
    }
    done += std::size_t(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("fsync of " + tmp);
  }
  if (::close(fd) != 0) return fail("closing " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("renaming " + tmp);
  // the rename itself reaches the disk with the folder's fsync
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

Result<std::vector<std::uint8_t>> read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return Status::error(path + ": cannot read");
  return bytes;
}

Result<Checkpoint> read_checkpoint(const std::string& path) {
  auto bytes = read_file_bytes(path);
  if (!bytes) return bytes.status();
  return decode_checkpoint(*bytes, path);
}

}  // namespace adj::optim
