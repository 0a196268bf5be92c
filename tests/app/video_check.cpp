// video_check FILE W H N GOLDEN: ffprobe says h264, W x H, N frames (N < 0: at least -N); the decoded frames
// are not all identical; the first decoded frame matches GOLDEN (PNG) within 5/255 on all
// but 0.1% of pixels (GOLDEN "-": no comparison). ADJ_UPDATE_GOLDENS=1 rewrites GOLDEN.
#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: video_check FILE WIDTH HEIGHT FRAMES GOLDEN\n");
    return 2;
  }
  std::string file = argv[1], golden = argv[5];
  int w = std::atoi(argv[2]), h = std::atoi(argv[3]), frames = std::atoi(argv[4]);

  // the container's view (FRAMES < 0: at least -FRAMES frames)
  std::string probe = run("ffprobe -v error -select_streams v:0 -count_frames -show_entries "
                          "stream=codec_name,width,height,nb_read_frames -of csv=p=0 '" + file + "'");
  std::string want = "h264," + std::to_string(w) + "," + std::to_string(h) + ",";
  int counted = probe.find(want) == 0 ? std::atoi(probe.c_str() + want.size()) : -1;
  if (counted < 0 || (frames >= 0 && counted != frames) || (frames < 0 && counted < -frames)) {
    std::fprintf(stderr, "video_check: ffprobe says '%s', expected '%s%s%d'\n", probe.c_str(), want.c_str(),
                 frames < 0 ? ">=" : "", frames < 0 ? -frames : frames);
    return 1;
  }
  frames = counted;

  // decoded frames
  std::string raw = run("ffmpeg -v error -i '" + file + "' -f rawvideo -pix_fmt rgba -");
  size_t frame_bytes = size_t(w) * h * 4;
  if (raw.size() != frame_bytes * frames) {
    std::fprintf(stderr, "video_check: decoded %zu bytes, expected %zu\n", raw.size(), frame_bytes * frames);
    return 1;
  }
  bool all_same = true;
  for (int f = 1; f < frames && all_same; ++f)
    all_same = std::memcmp(raw.data(), raw.data() + f * frame_bytes, frame_bytes) == 0;
  if (all_same) {
    std::fprintf(stderr, "video_check: all %d frames are identical: nothing moves\n", frames);
    return 1;
  }

  const unsigned char* first = reinterpret_cast<const unsigned char*>(raw.data());
  if (golden == "-") {
    std::printf("video_check: %s: h264 %dx%d, %d frames, not all identical\n", file.c_str(), w, h, frames);
    return 0;
  }
  const char* update = std::getenv("ADJ_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    stbi_write_png(golden.c_str(), w, h, 4, first, w * 4);
    std::printf("video_check: golden rewritten: %s\n", golden.c_str());
    return 0;
  }
  int gw = 0, gh = 0, gn = 0;
  unsigned char* g = stbi_load(golden.c_str(), &gw, &gh, &gn, 4);
  if (!g || gw != w || gh != h) {
    std::fprintf(stderr, "video_check: golden %s missing or of another size (ADJ_UPDATE_GOLDENS=1 makes it)\n",
                 golden.c_str());
    if (g) stbi_image_free(g);
    return 1;
  }
  size_t bad = 0;
  int worst = 0;
  for (size_t i = 0; i < size_t(w) * h; ++i) {
    int d = 0;
    for (int c = 0; c < 3; ++c) d = std::max(d, std::abs(int(g[4 * i + c]) - int(first[4 * i + c])));
    worst = std::max(worst, d);
    bad += d > 5;
  }
  stbi_image_free(g);
  size_t allowed = size_t(w) * h / 1000;
  std::printf("video_check: %s: h264 %dx%d, %d frames; first frame: %zu pixels off by > 5/255 (allowed %zu), "
              "max %d\n", file.c_str(), w, h, frames, bad, allowed, worst);
  return bad > allowed ? 1 : 0;
}
