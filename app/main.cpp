// adjoint: the editor, and the command-line tools beside it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "app/cmd_bench.h"
#include "app/cmd_bench_gpu.h"
#include "app/cmd_dynamics.h"
#include "app/cmd_landscape.h"
#include "app/cmd_optimize.h"
#include "app/cmd_render.h"
#include "app/cmd_run.h"
#include "app/cmd_watch.h"
#include "app/system_info.h"
#include "app/viewer.h"
#include "render/context.h"
#include "render/vk_check.h"

namespace {

// `adjoint info`: the Vulkan device that would be used and whether CUDA can run
int run_info(bool validation) {
  try {
    adj::render::ContextOptions o;
    o.validation = validation;
    adj::render::Context ctx(o);
    ctx.create_device(VK_NULL_HANDLE);
    const auto& d = ctx.info();
    std::printf("adjoint %s\n", ADJ_VERSION);
    std::printf("vulkan device: %s (%s)\n", d.name.c_str(), d.type.c_str());
    std::printf("vulkan driver: %s\n", d.driver.c_str());
    std::printf("vulkan api:    %s\n", d.api_version.c_str());
    std::printf("external memory fd: %s\n", d.external_memory_fd ? "yes" : "no");
  } catch (const adj::render::Error& e) {
    std::printf("vulkan: not available: %s\n", e.what());
  }
  std::printf("cuda: %s\n", adj::app::cuda_status().c_str());
  return 0;
}

// option's WxH value s into *w, *h; false (said why, naming the option) when it is not a size
// between 16x16 and 16384x16384
bool parse_size(const char* option, const std::string& s, uint32_t* w, uint32_t* h) {
  unsigned a = 0, b = 0;
  char x = 0, extra = 0;
  const bool ok = std::sscanf(s.c_str(), "%u%c%u%c", &a, &x, &b, &extra) == 3 && (x == 'x' || x == 'X') && a >= 16 &&
                  b >= 16 && a <= 16384 && b <= 16384;
  if (!ok) {
    std::fprintf(stderr, "adjoint: %s %s: expected WxH between 16x16 and 16384x16384\n", option, s.c_str());
    return false;
  }
  *w = a;
  *h = b;
  return true;
}

// a subcommand: its options parsed into storage the run function owns
struct Command {
  CLI::App* cmd;             // parsed when *cmd is true
  std::function<int()> run;  // what it does then
};
using Commands = std::vector<Command>;

// `adjoint info`
void add_info(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<bool>(false);
  bool& info_validation = *a;
  CLI::App* info = app.add_subcommand("info", "Print the Vulkan device and CUDA availability");
  info->add_flag("--validation", info_validation, "Vulkan validation layer on");
  cmds.push_back({info, [a] { return run_info(*a); }});
}

// `adjoint run`
void add_run(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<adj::app::RunOptions>();
  adj::app::RunOptions& run = *a;
  CLI::App* run_cmd = app.add_subcommand("run", "Roll a scene out headless and report (or write) its states");
  run_cmd->add_option("scene", run.scene_path, "Scene file (JSON)")->required()->check(CLI::ExistingFile);
  run_cmd->add_option("--steps,--frames", run.frames, "Frames to simulate")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  run_cmd->add_option("--out", run.out, "Write the states (particle positions, velocities; joint q, qd) as JSON");
  run_cmd->add_option("--every", run.every, "Write every k-th frame")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_cmd->add_option("--threads", run.threads, "OpenMP threads (0 = default)")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--worlds", run.worlds, "Independent copies of the scene (each under settings.randomize)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  run_cmd->add_option("--seed", run.seed, "Seed of the worlds' randomization (default: the first task's seed)")
      ->check(CLI::NonNegativeNumber);
  cmds.push_back({run_cmd, [a] { return adj::app::run_rollout(*a); }});
}

// `adjoint dynamics`
void add_dynamics(CLI::App& app, Commands& cmds) {
  struct Args {
    adj::app::DynamicsCmdOptions dyn;
    bool no_contact = false, no_limits = false, no_equality = false;
  };
  auto a = std::make_shared<Args>();
  adj::app::DynamicsCmdOptions& dyn = a->dyn;
  bool &dyn_no_contact = a->no_contact, &dyn_no_limits = a->no_limits, &dyn_no_equality = a->no_equality;
  CLI::App* dyn_cmd = app.add_subcommand(
      "dynamics",
      "A robot's mass matrix, bias, passive and actuator forces and qacc at one state, in MuJoCo's conventions");
  dyn_cmd->add_option("model", dyn.model_path, "URDF, MJCF (.xml) or scene (.json) file")
      ->required()
      ->check(CLI::ExistingFile);
  dyn_cmd->add_option("--qpos", dyn.qpos, "Joint positions, comma-separated (MuJoCo's qpos; default: qpos0)");
  dyn_cmd->add_option("--qvel", dyn.qvel, "Joint velocities, comma-separated (MuJoCo's qvel; default: zeros)");
  dyn_cmd->add_option("--ctrl", dyn.ctrl, "Actuator controls, comma-separated (clamped to ctrlrange; default: zeros)");
  dyn_cmd->add_flag("--no-contact", dyn_no_contact, "Leave out contact forces");
  dyn_cmd->add_flag("--no-limits", dyn_no_limits, "Leave out joint limit forces");
  dyn_cmd->add_flag("--no-equality", dyn_no_equality, "Leave out joint couplings (URDF mimic)");
  dyn_cmd->add_flag("--json", dyn.json, "JSON on stdout: qM, qfrc_bias, qfrc_passive, qfrc_actuator, qacc, ...");
  cmds.push_back({dyn_cmd, [a] {
                    a->dyn.contact = !a->no_contact;
                    a->dyn.limits = !a->no_limits;
                    a->dyn.equality = !a->no_equality;
                    return adj::app::run_dynamics(a->dyn);
                  }});
}

// `adjoint optimize`'s options; run_optimize_command below runs it
struct OptimizeArgs {
  adj::app::OptimizeOptions opt;
  std::string rec_size = "1280x720";
  CLI::App* cmd = nullptr;
};

void add_optimize_options(CLI::App& app, OptimizeArgs& a) {
  adj::app::OptimizeOptions& opt = a.opt;
  std::string& rec_size = a.rec_size;
  CLI::App* opt_cmd = a.cmd = app.add_subcommand("optimize", "Optimize a scene's task; one line per iteration");
  opt_cmd->add_option("scene", opt.scene_path, "Scene file (JSON)")->required()->check(CLI::ExistingFile);
  opt_cmd->add_option("--task", opt.task, "Task name (default: the first)");
  opt_cmd->add_option("--iterations", opt.iterations, "Iterations (default: the task's)")
      ->check(CLI::NonNegativeNumber);
  opt_cmd->add_option("--log", opt.log, "Write a JSON log: losses, gradient norms, final parameters");
  opt_cmd->add_option("--save-scene", opt.save_scene, "Write the scene with the optimized parameters");
  opt_cmd->add_option("--threads", opt.threads, "OpenMP threads (0 = default)")->check(CLI::NonNegativeNumber);
  opt_cmd->add_option("--record", opt.record, "Record every iteration's rollout: progress.mp4 or frames/%05d.png");
  opt_cmd->add_option("--record-size", rec_size, "Video size, WxH")->capture_default_str();
  opt_cmd->add_option("--fps", opt.record_fps, "Video frame rate")->check(CLI::Range(1, 240))->capture_default_str();
  opt_cmd->add_option("--record-every", opt.record_every, "Record every k-th iteration (and the last)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  opt_cmd
      ->add_option("--receding-horizon", opt.receding_window,
                   "Robot tasks: fly the task by receding-horizon control with plans of W frames "
                   "(--iterations: Adam steps per plan, default 8)")
      ->check(CLI::Range(1, 100000));
  opt_cmd->add_option("--execute", opt.receding_execute, "With --receding-horizon: frames applied per plan")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  opt_cmd
      ->add_option(
          "--method", opt.method,
          "bptt: the full-horizon gradient; shac: windows of frames over copies, a critic (the task's \"shac\" block) "
          "(--iterations: windows); ahac: SHAC's windows cut at stiff contact, their length adapting, two critics "
          "(the task's \"shac\" and \"ahac\" blocks); ppo: PPO on --envs copies (--iterations: PPO iterations); pods: "
          "improved "
          "action sequences, the policy regressed onto them "
          "(--order, --envs: episodes per iteration); receding: receding-horizon control (plans of "
          "--receding-horizon W frames, default 30)")
      ->check(CLI::IsMember({"bptt", "shac", "ahac", "ppo", "pods", "receding"}))
      ->capture_default_str();
  opt_cmd->add_option("--order", opt.pods_order, "PODS: 1 (normalized gradient step) or 2 (Newton step)")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
  opt_cmd->add_flag("--shac", opt.shac, "The same as --method shac");
  opt_cmd
      ->add_option("--envs", opt.shac_envs,
                   "SHAC, AHAC: copies of the world per window (default: the task's shac.envs, else 32); PPO: copies; "
                   "PODS: "
                   "episodes per iteration")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  opt_cmd
      ->add_option("--seed", opt.seed,
                   "The task's seed: a policy's initial weights, the trainers' draws, the worlds' "
                   "randomization (default: the task's)")
      ->check(CLI::NonNegativeNumber);
  opt_cmd
      ->add_option("--worlds", opt.worlds,
                   "BPTT: the loss and gradient averaged over this many worlds, each with its parameters from "
                   "settings.randomize (seed: --seed, default the task's); under mpirun the ranks share them")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  opt_cmd->add_option("--checkpoint-dir", opt.checkpoint_dir,
                      "SHAC, PPO: write checkpoints into this folder (every --checkpoint-every windows, at the end, "
                      "on Ctrl+C and at --stop-after)");
  opt_cmd
      ->add_option("--checkpoint-every", opt.checkpoint_every,
                   "SHAC, PPO: windows (iterations) between checkpoints (default 10)")
      ->check(CLI::PositiveNumber);
  opt_cmd->add_option("--resume", opt.resume,
                      "SHAC, PPO: continue the run whose checkpoint is in this folder (the same bits as a run "
                      "never stopped); checkpoints go on into it unless --checkpoint-dir says otherwise");
  opt_cmd
      ->add_option("--stop-after", opt.stop_after,
                   "SHAC, PPO: stop after this many windows (iterations; a checkpoint is written), e.g. a batch "
                   "system's time slot")
      ->check(CLI::PositiveNumber);
  opt_cmd
      ->add_option("--fingerprint-every", opt.fingerprint_every,
                   "SHAC and PPO under mpirun: windows (iterations) between the ranks' parameter comparisons "
                   "(0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  opt_cmd->add_option("--test-perturb-rank", opt.perturb_rank, "Tests: nudge this rank's weights")->group("");
  opt_cmd->add_option("--test-kill-rank", opt.kill_rank, "Tests: this rank dies after a window")->group("");
  auto* serve_opt = opt_cmd->add_option("--serve", opt.serve.address,
                                        "Publish the run to viewers (adjoint watch, the editor's File > Attach) on "
                                        "[HOST:]PORT; 127.0.0.1 unless a host is given; PORT 0: any free port");
  opt_cmd->add_flag("--serve-control", opt.serve.control, "With --serve: viewers may pause, resume and stop the run")
      ->needs(serve_opt);
  opt_cmd
      ->add_option("--serve-every", opt.serve.snapshot_every,
                   "With --serve: parameters and a rollout every K iterations")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->needs(serve_opt);
  opt_cmd
      ->add_option("--serve-worlds", opt.serve.worlds,
                   "With --serve, SHAC and PPO: a snapshot carries the rollouts of the first K training copies")
      ->check(CLI::Range(0, adj::app::wire::k_max_worlds))
      ->capture_default_str()
      ->needs(serve_opt);
  opt_cmd
      ->add_option("--serve-wait", opt.serve.wait_s, "With --serve: wait up to S seconds for a viewer before starting")
      ->check(CLI::NonNegativeNumber)
      ->needs(serve_opt);
}

// the parsed `adjoint optimize`: under mpirun (a build with MPI) the ranks share SHAC's, PPO's or
// PODS's copies (argc, argv: MPI's); a plain start is one process
int run_optimize_command(OptimizeArgs& a, int* argc, char*** argv) {
  adj::app::OptimizeOptions& opt = a.opt;
  CLI::App* opt_cmd = a.cmd;
  if (!parse_size("--record-size", a.rec_size, &opt.record_width, &opt.record_height)) return 2;
  opt.shac_envs_given = opt_cmd->count("--envs") > 0;
  if (opt.shac) opt.method = "shac";  // the older spellings
  if (opt.receding_window > 0) opt.method = "receding";
  std::unique_ptr<adj::dist::Communicator> comm = adj::dist::make_communicator(argc, argv);
  opt.comm = comm.get();
  const bool shac_like = opt.method == "shac" || opt.method == "ahac";
  if (comm->size() > 1 && !shac_like && opt.method != "ppo" && opt.method != "pods" && opt.method != "bptt") {
    if (comm->rank() == 0)
      std::fprintf(stderr,
                   "adjoint: --method %s runs in one process; under mpirun --method bptt (over --worlds), shac, "
                   "ahac, ppo and pods train\n",
                   opt.method.c_str());
    return 2;
  }
  if (opt.worlds > 1 && opt.method != "bptt") {
    std::fprintf(stderr,
                 "adjoint: --worlds is BPTT's (--method shac, ahac, ppo and pods take their copies from --envs)\n");
    return 2;
  }
  if (!shac_like && opt.method != "ppo" && (!opt.checkpoint_dir.empty() || !opt.resume.empty() || opt.stop_after > 0)) {
    std::fprintf(stderr, "adjoint: --checkpoint-dir, --resume and --stop-after are for --method shac, ahac and ppo\n");
    return 2;
  }
  if (shac_like || opt.method == "ppo" || opt.method == "pods" || opt.method == "bptt") {
    const int rc = shac_like              ? adj::app::run_shac(opt)
                   : opt.method == "ppo"  ? adj::app::run_ppo(opt)
                   : opt.method == "pods" ? adj::app::run_pods(opt)
                                          : adj::app::run_optimize(opt);
    // rank 0 alone evaluates and writes: when it fails, the others may wait for it. (The
    // training itself fails on every rank alike.)
    if (rc != 0 && comm->size() > 1 && comm->rank() == 0) {
      std::fflush(nullptr);
      comm->abort(rc);
    }
    return rc;
  }
  if (opt.method == "receding") {
    if (opt.receding_window <= 0) opt.receding_window = 30;
    return adj::app::run_receding_horizon(opt);
  }
  return adj::app::run_optimize(opt);
}

void add_optimize(CLI::App& app, Commands& cmds, int* argc, char*** argv) {
  auto a = std::make_shared<OptimizeArgs>();
  add_optimize_options(app, *a);
  cmds.push_back({a->cmd, [a, argc, argv] { return run_optimize_command(*a, argc, argv); }});
}

// `adjoint watch`
void add_watch(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<adj::app::WatchOptions>();
  adj::app::WatchOptions& watch = *a;
  CLI::App* watch_cmd =
      app.add_subcommand("watch", "Print a served run (adjoint optimize --serve) as it goes; exits when it ends");
  watch_cmd->add_option("address", watch.address, "[HOST:]PORT or tcp://HOST:PORT, as the run printed")->required();
  watch_cmd->add_option("--token", watch.token, "The run's token (default: ADJ_TOKEN)");
  watch_cmd->add_option("--timeout", watch.timeout, "Seconds without an answer before giving up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  watch_cmd
      ->add_option("--send", watch.send,
                   "Send pause, resume, stop or checkpoint (the run needs --serve-control) and exit")
      ->check(CLI::IsMember({"pause", "resume", "stop", "checkpoint"}));
  cmds.push_back({watch_cmd, [a] { return adj::app::run_watch(*a); }});
}

// `adjoint check-grad`
void add_check_grad(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<adj::app::CheckGradOptions>();
  adj::app::CheckGradOptions& cg = *a;
  CLI::App* cg_cmd = app.add_subcommand("check-grad", "Compare a task's gradient with central differences");
  cg_cmd->add_option("scene", cg.scene_path, "Scene file (JSON)")->required()->check(CLI::ExistingFile);
  cg_cmd->add_option("--task", cg.task, "Task name (default: the first)");
  cg_cmd->add_option("--samples", cg.samples, "Parameter entries to compare (0 = all)")->capture_default_str();
  cg_cmd->add_option("--eps", cg.eps, "Central-difference step")->capture_default_str();
  cg_cmd->add_option("--tolerance", cg.tolerance, "Maximum relative error")->capture_default_str();
  cg_cmd->add_option("--seed", cg.seed, "Seed that picks the entries")->capture_default_str();
  cg_cmd->add_option("--threads", cg.threads, "OpenMP threads (0 = default)")->check(CLI::NonNegativeNumber);
  cmds.push_back({cg_cmd, [a] { return adj::app::run_check_grad(*a); }});
}

// `adjoint landscape`
void add_landscape(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<adj::app::LandscapeCliOptions>();
  adj::app::LandscapeCliOptions& land = *a;
  CLI::App* land_cmd =
      app.add_subcommand("landscape", "A task's loss along a line or a plane, swept over contact settings (PNG, JSON)");
  land_cmd->add_option("scene", land.scene_path, "Scene file (JSON)")->required()->check(CLI::ExistingFile);
  land_cmd->add_option("--task", land.task, "Task name (default: the first)");
  land_cmd->add_option("--direction", land.direction, "grad, random, or a parameter entry (name or index)")
      ->capture_default_str();
  land_cmd->add_option("--direction2", land.direction2, "2D: the second direction's entry (default: random)");
  land_cmd->add_option("--span", land.span, "Half-width along the unit direction (default: 0.1 max(1, |theta|))");
  land_cmd->add_option("--points", land.points, "Points of the 1D slice (odd)")->capture_default_str();
  land_cmd->add_option("--grid", land.grid, "Also a GRID x GRID 2D slice (odd)");
  land_cmd->add_option("--sweep", land.sweep, "Contact settings to overlay, e.g. ke=1e3,1e4,1e5 (ke kd kf mu eps)");
  land_cmd->add_option("--stats", land.stats, "Gradient statistics over N seeded perturbations")
      ->check(CLI::NonNegativeNumber);
  land_cmd->add_option("--sigma", land.sigma, "Their standard deviation (default: span / 4)");
  land_cmd->add_option("--seed", land.seed, "Random directions and perturbations")->capture_default_str();
  land_cmd->add_option("--threads", land.threads, "Task copies in parallel (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  land_cmd->add_option("--png", land.png, "Write the plot");
  land_cmd->add_option("--json", land.json, "Write every evaluated point");
  cmds.push_back({land_cmd, [a] { return adj::app::run_landscape(*a); }});
}

// `adjoint render`
struct RenderArgs {
  adj::app::RenderOptions ren;
  std::string size = "1280x720", overlays, camera;
};

int run_render_command(RenderArgs& a) {
  if (!parse_size("--size", a.size, &a.ren.width, &a.ren.height)) return 2;
  std::string err;
  if (!adj::app::parse_overlays(a.overlays, a.ren, &err)) {
    std::fprintf(stderr, "adjoint: --overlays: %s\n", err.c_str());
    return 2;
  }
  if (!a.camera.empty() && !adj::app::parse_camera(a.camera, a.ren, &err)) {
    std::fprintf(stderr, "adjoint: --camera: %s\n", err.c_str());
    return 2;
  }
  return adj::app::run_render(a.ren);
}

void add_render(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<RenderArgs>();
  adj::app::RenderOptions& ren = a->ren;
  std::string &ren_size = a->size, &ren_overlays = a->overlays, &ren_camera = a->camera;
  CLI::App* ren_cmd = app.add_subcommand(
      "render", "Simulate a scene headless; render a still (.png), a video (.mp4) or PNG frames (dir/%05d.png)");
  ren_cmd->add_option("scene", ren.scene_path, "Scene file (JSON)")->required()->check(CLI::ExistingFile);
  ren_cmd->add_option("--out", ren.out, "Output: still.png, demo.mp4 or frames/%05d.png")->capture_default_str();
  ren_cmd->add_option("--frames", ren.frames, "Still: frames simulated first (0); video: frames (120)")
      ->check(CLI::NonNegativeNumber);
  ren_cmd->add_option("--fps", ren.fps, "Video frame rate; each frame advances 1/fps s")
      ->check(CLI::Range(1, 240))
      ->capture_default_str();
  ren_cmd->add_option("--size", ren_size, "Image size, WxH")->capture_default_str();
  ren_cmd->add_option("--overlays", ren_overlays, "Comma list: contacts, velocities, gradients, ghosts, wireframe");
  ren_cmd->add_option("--camera", ren_camera, "yaw,pitch[,distance[,x,y,z]] in degrees and metres");
  ren_cmd->add_flag("--contacts", ren.contacts, "Overlay contact points and forces");
  ren_cmd->add_flag("--velocities", ren.velocities, "Overlay velocity arrows");
  ren_cmd->add_flag("--wireframe", ren.wireframe, "Overlay mesh edges");
  ren_cmd->add_option("--backend", ren.backend, "Particle simulation: cpu or cuda (robots: cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  ren_cmd
      ->add_option("--data-path", ren.data_path,
                   "How particles reach the renderer: auto, host, mapped (cpu), staging, interop (cuda)")
      ->check(CLI::IsMember({"auto", "host", "mapped", "staging", "interop"}))
      ->capture_default_str();
  ren_cmd->add_option("--states", ren.states, "Also write every simulated frame's state as JSON");
  ren_cmd->add_option("--policy", ren.policy,
                      "A SHAC/AHAC/PPO checkpoint folder: render its evaluation episode (deterministic policy)");
  ren_cmd->add_option("--stride", ren.stride, "With --policy: episode frames per video frame")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  ren_cmd->add_flag("--follow", ren.follow, "The camera follows the robot (on with --policy)");
  ren_cmd->add_flag("--validation", ren.validation, "Vulkan validation layer on; any error fails (exit 3)");
  cmds.push_back({ren_cmd, [a] { return run_render_command(*a); }});
}

// `adjoint bench render|gpu|sample-efficiency|worlds`
void add_bench_render(CLI::App& bench_cmd, Commands& cmds) {
  auto a = std::make_shared<adj::app::BenchRenderOptions>();
  adj::app::BenchRenderOptions& bench_render = *a;
  CLI::App* bench_render_cmd = bench_cmd.add_subcommand("render", "Renderer frame times at 1280x720 (offscreen)");
  bench_render_cmd->add_option("--frames", bench_render.frames, "Timed frames per case")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  bench_render_cmd->add_flag("--quick", bench_render.quick, "Small cases only (a smoke run)");
  cmds.push_back({bench_render_cmd, [a] { return adj::app::run_bench_render(*a); }});
}

void add_bench_gpu(CLI::App& bench_cmd, Commands& cmds) {
  auto a = std::make_shared<adj::app::BenchGpuOptions>();
  adj::app::BenchGpuOptions& bench_gpu = *a;
  CLI::App* bench_gpu_cmd = bench_cmd.add_subcommand(
      "gpu", "CUDA: forward steps/s, backward/forward, sim+render frame time interop vs staging (77: no GPU)");
  bench_gpu_cmd->add_option("--steps", bench_gpu.steps, "Rollout steps")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  bench_gpu_cmd->add_option("--frames", bench_gpu.frames, "Timed frames per render case")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bench_gpu_cmd->add_flag("--quick", bench_gpu.quick, "Small cases only (a smoke run)");
  bench_gpu_cmd->add_flag("--validation", bench_gpu.validation, "Vulkan validation on; any error fails");
  cmds.push_back({bench_gpu_cmd, [a] { return adj::app::run_bench_gpu(*a); }});
}

void add_bench_sample(CLI::App& bench_cmd, Commands& cmds) {
  auto a = std::make_shared<adj::app::BenchSampleOptions>();
  adj::app::BenchSampleOptions& bench_sample = *a;
  bench_sample.scene_path = ADJ_SOURCE_DIR "/assets/scenes/walker.json";
  CLI::App* bench_sample_cmd =
      bench_cmd.add_subcommand("sample-efficiency", "Simulator steps to a walking distance: gradients vs PPO");
  bench_sample_cmd->add_option("scene", bench_sample.scene_path, "Scene with a policy task")
      ->check(CLI::ExistingFile)
      ->capture_default_str();
  bench_sample_cmd->add_option("--task", bench_sample.task, "Task name (default: the first)");
  bench_sample_cmd->add_option("--seeds", bench_sample.seeds, "Seeds")->capture_default_str();
  bench_sample_cmd->add_option("--ppo-steps", bench_sample.ppo_max_steps, "PPO budget per seed [substeps]")
      ->capture_default_str();
  bench_sample_cmd->add_option("--bptt-iterations", bench_sample.bptt_iterations, "BPTT iterations")
      ->capture_default_str();
  bench_sample_cmd->add_option("--shac-window", bench_sample.shac_window, "SHAC window [frames]; 0 skips SHAC")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--pods-iterations", bench_sample.pods_iterations,
                   "With --target-cost: PODS-1 and PODS-2 iterations; 0 skips PODS")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--target-cost", bench_sample.target_cost,
                   "Mean frame cost to reach (cartpole: 3); 0: 0.8 x the best BPTT progress")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--start-q-range", bench_sample.start_q_range,
                   "With --target-cost: randomized starts move each joint coordinate by up to this [rad or m] (< 0: "
                   "the task policy's start_q_range)")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--start-qd-range", bench_sample.start_qd_range,
                   "With --target-cost: randomized starts move each dof velocity by up to this (< 0: the task policy's "
                   "start_qd_range)")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--shac-windows", bench_sample.shac_windows, "With --target-cost: SHAC's budget [windows]")
      ->capture_default_str();
  bench_sample_cmd->add_option("--methods", bench_sample.methods, "Methods to run: BPTT SHAC PODS-1 PODS-2 PPO (all)");
  bench_sample_cmd
      ->add_option("--pods-batch", bench_sample.pods_batch, "PODS episodes per iteration (0: as SHAC's copies, 32)")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--pods-epochs", bench_sample.pods_epochs,
                   "PODS: regression passes per iteration (0: PodsOptions' default)")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--pods-radius-max", bench_sample.pods_radius_max,
                   "PODS: the largest step or trust radius (0: PodsOptions' default)")
      ->capture_default_str();
  bench_sample_cmd->add_option("--pods-cg", bench_sample.pods_cg, "PODS-2: H v products per episode")
      ->capture_default_str();
  bench_sample_cmd
      ->add_option("--pods-radius", bench_sample.pods_radius,
                   "PODS: first step (order 1) or trust radius (order 2), RMS per action entry")
      ->capture_default_str();
  cmds.push_back({bench_sample_cmd, [a] { return adj::app::run_bench_sample_efficiency(*a); }});
}

void add_bench_worlds(CLI::App& bench_cmd, Commands& cmds) {
  auto a = std::make_shared<adj::app::BenchWorldsOptions>();
  adj::app::BenchWorldsOptions& bench_worlds = *a;
  CLI::App* bench_worlds_cmd = bench_cmd.add_subcommand(
      "worlds", "Control steps per second and memory per world of a scene over many worlds (forward, + backward)");
  bench_worlds_cmd->add_option("scene", bench_worlds.scene_path, "Scene file (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  bench_worlds_cmd->add_option("--worlds", bench_worlds.worlds, "Worlds")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  bench_worlds_cmd->add_option("--threads", bench_worlds.threads, "Threads over the worlds")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  bench_worlds_cmd->add_option("--window", bench_worlds.window, "Control steps a window")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bench_worlds_cmd->add_option("--windows", bench_worlds.windows, "Windows timed per row")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bench_worlds_cmd->add_flag("--double", bench_worlds.use_double, "Double precision (default: float)");
  bench_worlds_cmd->add_flag("--recompute", bench_worlds.recompute,
                             "The reverse pass recomputes each step (less memory) instead of reading its record");
  bench_worlds_cmd->add_flag("--cuda", bench_worlds.cuda,
                             "The worlds on CUDA: bodies-only scenes in one launch, one thread each; others a launch "
                             "per world (exit 77 without a device)");
  cmds.push_back({bench_worlds_cmd, [a] { return adj::app::run_bench_worlds(*a); }});
}

void add_bench(CLI::App& app, Commands& cmds) {
  CLI::App* bench_cmd = app.add_subcommand("bench", "Benchmarks, printed as tables");
  bench_cmd->require_subcommand(1);
  for (auto add : {add_bench_render, add_bench_gpu, add_bench_sample, add_bench_worlds}) add(*bench_cmd, cmds);
}

// no subcommand: the editor
struct ViewerArgs {
  adj::app::ViewerOptions v;
  std::string size = "1280x720";
};

void add_viewer_options(CLI::App& app, ViewerArgs& a) {
  adj::app::ViewerOptions& v = a.v;
  std::string& size = a.size;
  app.add_option("scene", v.scene_path, "Scene file to open (JSON)");
  app.add_option("--frames", v.frames, "Render this many frames, then quit")->check(CLI::NonNegativeNumber);
  app.add_option("--screenshot", v.screenshot, "Save the last frame as PNG (with --frames)");
  app.add_flag("--headless", v.headless, "No window: render offscreen");
  app.add_option("--size", size, "Window or image size, WxH")->capture_default_str();
  app.add_flag("--validation", v.validation, "Vulkan validation layer on; any error fails (exit 3)");
  app.add_flag("--sync-validation", v.sync_validation, "Also synchronization validation");
  app.add_flag("!--no-vsync", v.vsync, "Present without waiting for vertical sync");
  app.add_flag("--about", v.show_about, "Open the About window at start");
  app.add_flag("--play", v.play, "Start the simulation playing");
  app.add_option("--msaa", v.msaa, "Editor anti-aliasing samples (1 or 4; default 4, 1 on a CPU rasterizer)")
      ->check(CLI::IsMember({1, 4}));
  app.add_option("--script", v.script, "Drive the editor from a command file, then quit")->check(CLI::ExistingFile);
}

}  // namespace

int main(int argc, char** argv) {
  // OpenMP threads sleep when idle instead of spinning: the UI thread, the worker and the
  // encoder share few cores, and spinning made small scenes 200x slower on 2 busy cores (and
  // took half the editor's CPU time from the rasterizer). libgomp reads its environment when
  // it is loaded, before main: set it and start again, once.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/1);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
      self[n] = '\0';
      execv(self, argv);  // returns only on failure: then run with spinning threads
    }
  }
  CLI::App app{
      "Adjoint: a differentiable-physics editor and visualizer.\n"
      "Without a subcommand, opens the editor on SCENE."};
  app.set_version_flag("--version", ADJ_VERSION);

  ViewerArgs viewer;
  add_viewer_options(app, viewer);
  Commands cmds;
  add_info(app, cmds);
  add_run(app, cmds);
  add_dynamics(app, cmds);
  add_optimize(app, cmds, &argc, &argv);
  add_watch(app, cmds);
  add_check_grad(app, cmds);
  add_landscape(app, cmds);
  add_render(app, cmds);
  add_bench(app, cmds);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and a hint to --help
    return 2;
  }

  for (const Command& c : cmds)
    if (*c.cmd) return c.run();
  if (!parse_size("--size", viewer.size, &viewer.v.width, &viewer.v.height)) return 2;
  if (viewer.v.sync_validation) viewer.v.validation = true;
  return adj::app::run_viewer(viewer.v);
}
