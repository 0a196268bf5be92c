// engine/solver/team.h's choice between one thread and the team, on made-up step times
#include "engine/solver/team.h"

#include <catch2/catch.hpp>
#include <vector>

using adj::TeamChoice;

// the picks of `steps` steps whose time is team_ms(step) on the team and one_ms(step) on one thread
template <class T, class O>
static std::vector<int> team_steps(int steps, const T& team_ms, const O& one_ms) {
  TeamChoice c;
  std::vector<int> on_team;
  for (int i = 0; i < steps; ++i) {
    const bool team = c.pick();
    if (team) on_team.push_back(i);
    c.note(team, team ? team_ms(i) : one_ms(i));
  }
  return on_team;
}

TEST_CASE("team choice: two steps of each first, then the team every step while it is faster", "[solver][team]") {
  const std::vector<int> team = team_steps(
      60, [](int) { return 1.0; }, [](int) { return 1.8; });
  std::vector<int> expected{1, 3};
  for (int i = 4; i < 60; ++i) expected.push_back(i);  // no retries of one thread
  CHECK(team == expected);
}

TEST_CASE("team choice: one thread while it is faster, the team retried after 8, 16, 32 steps", "[solver][team]") {
  const std::vector<int> team = team_steps(
      70, [](int) { return 3.0; }, [](int) { return 1.0; });
  CHECK(team == std::vector<int>{1, 3, 8, 16, 32, 64});
}

TEST_CASE("team choice: the cold first step of one thread does not keep the team", "[solver][team]") {
  // one thread's first step 10x slower (first touch); the team never faster than a warm one
  const std::vector<int> team = team_steps(
      20, [](int) { return 1.5; }, [](int i) { return i == 0 ? 10.0 : 1.0; });
  CHECK(team == std::vector<int>{1, 3, 8, 16});
}

TEST_CASE("team choice: when the team slows down (a busy machine), one thread takes over", "[solver][team]") {
  // the team is twice as fast for 20 steps, then 10x slower; its lower envelope drifts up 5% a
  // step (1.05^15 > 2), so one thread takes over at step 35 and retries the team 8 and 16 steps on
  const std::vector<int> team = team_steps(
      60, [](int i) { return i < 20 ? 1.0 : 10.0; }, [](int) { return 2.0; });
  std::vector<int> expected{1, 3};
  for (int i = 4; i <= 34; ++i) expected.push_back(i);
  expected.insert(expected.end(), {42, 50});
  CHECK(team == expected);
}
