// The differentiable fields of the world, each listed once (as MuJoCo's mjxmacro.h lists
// mjModel's arrays). Everything per field is generated from this list: the parameter kinds of
// a task (scene::ParamKind, its JSON name and label), the gradient slots (ModelGradT's
// zero/make_grad, the kernels' ModelGradView, the CUDA rollout's upload/zero/download), the
// parameter blocks (optim::ParametersT: create/initial/apply/gather/entry_name)
// and the write-back into the scene document (optim::write_back). This header only holds the
// list; engine/model/fields.h turns it into types and functions over Model and ModelGrad.
//
// Adding a kind = one row here + its gradient: the element kernel's adjoint writing
// `a.g.<field>[slot]` (engine/solver/kernels.h), or for a robot field the articulation's adjoint
// filling `grad`. Columns:
//   decl    kind: the row declares scene::ParamKind::<kind>; same: a second side of a kind an
//           earlier row declares (the robots' own contact parameters; gravity, which is one:
//           either side's block writes both values and reads both gradients, parameters.cpp)
//   kind    the parameter kind a task names (= its JSON name)
//   field   the row's own name (adj::Field::<field>)
//   side    particles: ParametersT and the particle stages (a task of particle objects);
//           robot: ParametersT's bodies' blocks and the articulation (a task with robot parameters or losses)
//   domain  what the field is indexed by: particle, spring, triangle, edge, tet, body, dof,
//           actuator; or scene (one value for the whole world, no object)
//   slots   particle side: the kernel domain that writes its gradient slots (= domain for
//           per-element fields; scene-wide fields get one slot per element of this domain,
//           summed in index order: deterministic, no atomics)
//   width   entries per element: 1, or 3 for a vector (x, y, z)
//   select  the elements of an object a block covers: all; positive (those > 0: pinned
//           particles and massless bodies stay so; the lower bound defaults to 1e-6); pd (PD
//           actuators); nonneg (all, the lower bound defaults to 0: damping, armature)
//   model   the value in ModelT (rigid.* lies in RigidModelT)
//   grad    its gradient in ModelGradT (rigid.* in RigidModelGradT)
//   doc     where optim::write_back puts it in the scene document (a writer of write_back.cpp)
//   label   what the editor and messages call it
//   units
#pragma once

// clang-format off
#define ADJ_MODEL_FIELDS(X) \
  /* decl  kind           field             side       domain    slots     width select    model              grad               doc                                    label                                units */ \
  X(kind, spring_rest,   spring_rest,      particles, spring,   spring,   1, all,      spring_rest,       spring_rest,       springs(&Spring::rest),                "spring rest lengths",               "m") \
  X(kind, spring_ke,     spring_ke,        particles, spring,   spring,   1, all,      spring_ke,         spring_ke,         springs(&Spring::ke),                  "spring stiffnesses",                "N/m") \
  X(kind, spring_kd,     spring_kd,        particles, spring,   spring,   1, all,      spring_kd,         spring_kd,         springs(&Spring::kd),                  "spring damping",                    "N s/m") \
  X(kind, tri_ke,        tri_ke,           particles, triangle, triangle, 1, all,      tri_ke,            tri_ke,            cloth(&ClothMaterialSpec::tri_ke),     "cloth stretch stiffness",           "N/m") \
  X(kind, tri_ka,        tri_ka,           particles, triangle, triangle, 1, all,      tri_ka,            tri_ka,            cloth(&ClothMaterialSpec::tri_ka),     "cloth area stiffness",              "N/m") \
  X(kind, tri_kd,        tri_kd,           particles, triangle, triangle, 1, all,      tri_kd,            tri_kd,            cloth(&ClothMaterialSpec::tri_kd),     "cloth strain-rate damping",         "N s/m") \
  X(kind, edge_ke,       edge_ke,          particles, edge,     edge,     1, all,      edge_ke,           edge_ke,           cloth(&ClothMaterialSpec::edge_ke),    "cloth bending stiffness",           "N m/rad") \
  X(kind, lift,          lift,             particles, scene,    triangle, 1, all,      tri_lift,          tri_lift,          every_cloth(&ClothMaterialSpec::lift), "aerodynamic lift",                  "") \
  X(kind, drag,          drag,             particles, scene,    triangle, 1, all,      tri_drag,          tri_drag,          every_cloth(&ClothMaterialSpec::drag), "aerodynamic drag",                  "") \
  X(kind, tet_mu,        tet_mu,           particles, tet,      tet,      1, all,      tet_mu,            tet_mu,            soft(&SoftMaterialSpec::mu),           "tet mu",                            "Pa") \
  X(kind, tet_lambda,    tet_lambda,       particles, tet,      tet,      1, all,      tet_lambda,        tet_lambda,        soft(&SoftMaterialSpec::lambda),       "tet lambda",                        "Pa") \
  X(kind, particle_mass, particle_mass,    particles, particle, particle, 1, positive, particle_mass,     particle_mass,     particle_masses(),                     "particle masses",                   "kg") \
  X(kind, gravity,       gravity,          particles, scene,    particle, 3, all,      gravity,           gravity,           gravity(),                             "gravity",                           "m/s^2") \
  X(kind, contact_ke,    contact_ke,       particles, scene,    particle, 1, all,      contact_ke,        contact_ke,        contact(&ContactSettings::ke),         "contact ke",                        "N/m") \
  X(kind, contact_kd,    contact_kd,       particles, scene,    particle, 1, all,      contact_kd,        contact_kd,        contact(&ContactSettings::kd),         "contact kd",                        "N s/m") \
  X(kind, contact_mu,    contact_mu,       particles, scene,    particle, 1, all,      contact_mu,        contact_mu,        contact(&ContactSettings::mu),         "contact mu",                        "") \
  X(kind, body_mass,     body_mass,        robot,     body,     body,     1, positive, rigid.body_mass,   rigid.body_mass,   body_masses(),                         "body masses",                       "kg") \
  X(kind, actuator_kp,   actuator_kp,      robot,     actuator, actuator, 1, pd,       rigid.actuator_kp, rigid.actuator_kp, actuator_gains(&RobotActuator::kp),    "PD stiffness kp",                   "N m/rad or N/m") \
  X(kind, actuator_kd,   actuator_kd,      robot,     actuator, actuator, 1, pd,       rigid.actuator_kd, rigid.actuator_kd, actuator_gains(&RobotActuator::kd),    "PD damping kd",                     "N m s/rad or N s/m") \
  X(kind, joint_damping, joint_damping,    robot,     dof,      dof,      1, nonneg,   rigid.dof_damping, rigid.dof_damping, joint_dofs(&RobotBody::damping),       "joint damping",                     "N m s/rad or N s/m") \
  X(kind, joint_armature, joint_armature,  robot,     dof,      dof,      1, nonneg,   rigid.dof_armature, rigid.dof_armature, joint_dofs(&RobotBody::armature),    "joint armature",                    "kg m^2 or kg") \
  X(same, contact_ke,    robot_contact_ke, robot,     scene,    scene,    1, all,      rigid.contact_ke,  rigid.contact_ke,  robot_contact(&RobotContactSettings::ke), "robot contact ke",                "N/m") \
  X(same, contact_kd,    robot_contact_kd, robot,     scene,    scene,    1, all,      rigid.contact_kd,  rigid.contact_kd,  robot_contact(&RobotContactSettings::kd), "robot contact kd",                "N s/m") \
  X(same, contact_mu,    robot_contact_mu, robot,     scene,    scene,    1, all,      rigid.contact_mu,  rigid.contact_mu,  robot_contact(&RobotContactSettings::mu), "robot contact mu",                "") \
  X(same, gravity,       robot_gravity,    robot,     scene,    scene,    3, all,      rigid.gravity,     rigid.gravity,     gravity(),                             "gravity",                           "m/s^2")
// clang-format on

// the decl column: which rows declare a ParamKind
#define ADJ_FIELD_DECLARES_kind(...) __VA_ARGS__
#define ADJ_FIELD_DECLARES_same(...)
// the side column: code for the particle side only
#define ADJ_FIELD_PARTICLES_particles(...) __VA_ARGS__
#define ADJ_FIELD_PARTICLES_robot(...)
