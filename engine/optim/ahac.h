// AHAC: Adaptive Horizon Actor-Critic (Georgiev, Srinivasan, Xu, Heiden, Garg, "Adaptive Horizon
// Actor-Critic for Policy Learning in Contact-Rich Differentiable Simulation", ICML 2024,
// arXiv 2405.17784). SHAC (shac.h BatchShacTrainerT) with two changes, switched on by
// BatchShacOptions::ahac; everything else (the windows over many copies, the critic's TD(lambda)
// fit, the normalizer, checkpoints, MPI ranks, viewers) is SHAC's own code:
//
// 1. The adaptive horizon. Gradients through stiff contact are what make first-order policy
//    gradients err (the paper's analysis), so a copy's window is cut after the first frame that
//    ends in stiff contact, and the critic bootstraps the value there (not a termination: the
//    episode goes on in the next window). Stiffness is measured, as the paper proxies it, by the
//    contact forces: PolicyEnvT::contact_measure, the norm of the world's contact forces [N] at
//    the frame's end state (the bodies' contacts and their pairs with particles); the threshold is C
//    (contact_threshold). The window's length, the horizon T, adapts over training by a dual (Lagrangian) rule on the
//    constraint that the contact measure stay below C along the window (ahac_dual_step below).
// 2. The double critic: two critics (and two target critics), initialized apart, each fitting the
//    same TD(lambda) targets; the value of a state, for the targets and for the actor's bootstrap,
//    is the more pessimistic of the two (double_critic_value), against the single critic's
//    overestimation. The critics here learn the cost to go (minus the return), so the pessimistic
//    one is the larger cost: the minimum of the two returns, as the paper and TD3 take it.
//
// Where each fact comes from. From the paper's abstract and summary (PMLR 235:15418-15437; its
// project page adaptive-horizon-actor-critic.github.io): the method adapts the model-based horizon
// to avoid stiff dynamics, truncating rollouts at contact by a threshold C on a horizon constraint,
// through a dual formulation, with a double critic; 40% more reward than PPO on the locomotion
// suite. The paper's published Ant result (~9,310) is in ../shared/benchmarks/locomotion.md. The
// method section's exact update equations and its hyperparameter table could not be read where
// this was written. The authors' released code (read for facts only) takes the minimum of the
// critics' values, which are returns; here the critics learn costs, so the pessimistic one is the
// larger. Two choices here are this project's, stated as such: the contact measure is read at the
// frame's end state, and the dual rule is the projected ascent below (the released code learns the
// horizon as a scalar from 4 frames up, and has no target critic). The defaults of AhacOptions are
// this project's too, not the paper's table.
#pragma once

namespace adj::optim {

struct AhacOptions {
  bool enabled = false;  // off: SHAC
  // C [N]: a copy's window ends after the first frame whose end state's contact measure is above
  // it (the scene's "ahac" block states it per robot: the Ant weighs ~1.8 kN)
  double contact_threshold = 1e4;
  // the horizon T stays within [horizon_min, BatchShacOptions::window] frames; it starts at the
  // window (SHAC's horizon) and each window runs floor(T) frames unless cut
  int horizon_min = 8;
  // alpha_phi: the dual variable's step per unit of relative violation (frames)
  double dual_lr = 4.0;
  bool double_critic = true;  // two critics, the smaller return (false: SHAC's one critic)
};

// the dual rule on the constraint m <= C along the windows: with v the window's mean relative
// violation, v = mean over the frames run by every copy of (m_t - C) / C, the dual variable phi >= 0
// takes one projected ascent step (kept where the horizon can follow it) and the horizon is the
// longest window less phi:
//   phi <- clamp(phi + dual_lr v, 0, window - horizon_min),   T = window - phi
// so the horizon shrinks while the windows run into stiff contact on average and grows back to
// the window when they do not
struct AhacHorizon {
  double dual = 0;     // phi
  double horizon = 0;  // T [frames]
};
AhacHorizon ahac_dual_step(const AhacOptions& o, int window, double dual, double mean_violation);

// the double critic's value of a state from its two critics' costs to go: the larger cost, which
// is the smaller return (the smaller cost would be the optimistic estimate the pair is there to avoid)
template <class S>
S double_critic_value(S cost1, S cost2) {
  return cost2 > cost1 ? cost2 : cost1;
}

}  // namespace adj::optim
