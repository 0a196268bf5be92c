#include "app/run_checkpoint.h"

#include <filesystem>

namespace adj::app {

namespace {

std::string file_in(const std::string& dir) { return (std::filesystem::path(dir) / "checkpoint.adjck").string(); }

}  // namespace

nlohmann::json shac_run_identity(const std::string& scene, const std::string& task, int windows, std::uint64_t seed,
                                 const std::string& method) {
  return {{"method", method}, {"scene", scene}, {"task", task}, {"windows", windows}, {"seed", seed}};
}

Status checkpoint_plan(const OptimizeOptions& o, std::string& dir, int& every) {
  dir = !o.checkpoint_dir.empty() ? o.checkpoint_dir : o.resume;
  every = dir.empty() ? 0 : o.checkpoint_every > 0 ? o.checkpoint_every : 10;
  if ((o.checkpoint_every > 0 || o.stop_after > 0) && dir.empty())
    return Status::error("--checkpoint-every and --stop-after need --checkpoint-dir (or --resume): where to write");
  if (o.resume.empty() && !dir.empty() && std::filesystem::exists(file_in(dir)))
    return Status::error(dir + " already holds a checkpoint: continue that run with --resume " + dir +
                         ", or write into another folder");
  return Status::ok();
}

Result<optim::Checkpoint> read_run_checkpoint(const std::string& dir, const nlohmann::json& identity,
                                              dist::Communicator& comm, RunTotals& totals) {
  const std::string path = file_in(dir);
  // byte 0: 1 and the file, or 0 and why it could not be read
  dist::Bytes bytes{0};
  if (comm.rank() == 0) {
    auto read = optim::read_file_bytes(path);
    if (read) {
      bytes[0] = 1;
      bytes.insert(bytes.end(), read->begin(), read->end());
    } else {
      bytes.insert(bytes.end(), read.status().message().begin(), read.status().message().end());
    }
  }
  if (Status st = comm.broadcast(bytes, 0); !st) return st;
  if (bytes.empty() || bytes[0] != 1)
    return Status::error(bytes.size() > 1 ? std::string(bytes.begin() + 1, bytes.end()) : path + ": cannot read");
  bytes.erase(bytes.begin());
  auto ck = optim::decode_checkpoint(bytes, path);
  if (!ck) return ck.status();
  // the method first: the other keys differ between methods
  if (identity.contains("method"))
    if (Status st = ck->expect_run("method", identity["method"]); !st) return st;
  for (const auto& [key, value] : identity.items())
    if (Status st = ck->expect_run(key, value); !st) return st;
  try {
    const nlohmann::json& cli = ck->header.at("cli");
    totals.ended = cli.at("episodes_ended").get<int>();
    totals.first = cli.at("first_eval").get<double>();
    totals.rows = cli.at("rows");
  } catch (const nlohmann::json::exception& e) {
    return ck->error(std::string("header.cli: ") + e.what());
  }
  return ck;
}

Status write_run_checkpoint(const std::string& dir, const nlohmann::json& identity, const RunTotals& totals,
                            optim::Checkpoint& ck, dist::Communicator& comm) {
  ck.header["run"] = identity;
  ck.header["cli"] = {{"episodes_ended", totals.ended}, {"first_eval", totals.first}, {"rows", totals.rows}};
  if (comm.rank() != 0) return Status::ok();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::error(dir + ": cannot create the checkpoint folder: " + ec.message());
  return optim::write_checkpoint(ck, file_in(dir));
}

}  // namespace adj::app
