"""MuJoCo's C mj_step (through mujoco.rollout, one thread) on the robot files that
adjoint_rigid_bench times beside it: the same URDFs of ../shared/robots, the same 1/240 s step.
Run by scripts/bench-mujoco.sh in a venv of its own (never a test dependency).
  python bench-mujoco.py ROBOTS_DIR SECONDS"""
import sys
import time

import mujoco
import numpy as np
from mujoco import rollout

robots, seconds = sys.argv[1], float(sys.argv[2])


def fixed(path):  # welded to the world (MuJoCo's URDF default), no contact at all
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    return m


def free_fall(path):  # a free root 0.5 m over a ground plane
    spec = mujoco.MjSpec.from_file(path)
    root = spec.worldbody.first_body()
    root.add_freejoint()
    root.pos = [0, 0, 0.5]
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 0.1])
    return spec.compile()


cases = [("kuka_iiwa (fixed, no contact, 1/240 s)", fixed, "urdf/kuka_iiwa/model.urdf"),
         ("a1 (fixed, no contact, 1/240 s)", fixed, "urdf/a1/a1.urdf"),
         ("a1 (free fall onto the ground, 1/240 s)", free_fall, "urdf/a1/a1.urdf")]
for label, make, file in cases:
    m = make(f"{robots}/{file}")
    m.opt.timestep = 1.0 / 240.0
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty((1, mujoco.mj_stateSize(m, spec)))
    mujoco.mj_getState(m, d, state[0], spec)
    nstep = 1000
    rollout.rollout(m, d, state, nstep=nstep)  # warm-up
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        rollout.rollout(m, d, state, nstep=nstep)
        steps += nstep
    rate = steps / (time.perf_counter() - t0)
    print(f"{label} mujoco {mujoco.__version__} dof {m.nv:2d}: {rate:10.0f} steps/s forward (mj_step, implicitfast)")
