// `adjoint_engine_bench --scene FILE [--threads T] [--repeats R]`: fixed-iteration timing of
// the scene's first task, forward and forward + backward (tests/bench/task_timing.cpp)
#pragma once

namespace adj::bench {

int run_task_timing(int argc, char** argv);

}  // namespace adj::bench
