#include "engine/optim/write_back.h"

namespace adj::optim {

std::vector<std::string> write_back(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                    const scene::CompiledScene& cs, scene::Scene& doc) {
  std::vector<std::string> notes;
  for (const ParamBlock& b : blocks) {
    if (b.offset + b.count > int(theta.size())) {
      notes.push_back("parameters do not match their blocks: nothing written");
      break;
    }
    const scene::ObjectRange* range = cs.find(b.object);
    scene::Object* obj = nullptr;
    for (auto& o : doc.objects)
      if (o.name == b.object) obj = &o;
    auto entry = [&](int e, int c) { return double(theta[b.offset + e * b.width + c]); };
    using K = scene::ParamKind;
    switch (b.kind) {
      case K::contact_ke: doc.settings.contact.ke = entry(0, 0); break;
      case K::contact_kd: doc.settings.contact.kd = entry(0, 0); break;
      case K::contact_mu: doc.settings.contact.mu = entry(0, 0); break;
      case K::initial_position:
      case K::initial_velocity: {
        if (!obj || !range) break;
        bool vel = b.kind == K::initial_velocity;
        if (obj->kind == scene::ObjectKind::particles) {
          for (int e = 0; e < b.elements; ++e) {
            int local = b.index[e] - range->particle_begin;
            if (local < 0 || local >= int(obj->particles.particles.size())) continue;
            auto& p = obj->particles.particles[local];
            (vel ? p.velocity : p.position) = {entry(e, 0), entry(e, 1), entry(e, 2)};
          }
        } else if (vel && (obj->kind == scene::ObjectKind::cloth || obj->kind == scene::ObjectKind::soft)) {
          scene::V3 mean{0, 0, 0};
          for (int e = 0; e < b.elements; ++e)
            for (int c = 0; c < 3; ++c) mean[c] += entry(e, c) / b.elements;
          (obj->kind == scene::ObjectKind::cloth ? obj->cloth.velocity : obj->soft.velocity) = mean;
          notes.push_back(b.object + ": per-particle initial velocities saved as their mean (the "
                          "document holds one velocity per cloth or soft body)");
        } else {
          notes.push_back(b.object + ": per-particle initial positions are not part of the document");
        }
        break;
      }
      case K::spring_rest:
      case K::spring_ke: {
        if (!obj || !range || obj->kind != scene::ObjectKind::particles) break;
        for (int e = 0; e < b.elements; ++e) {
          int local = b.index[e] - range->spring_begin;
          if (local < 0 || local >= int(obj->particles.springs.size())) continue;
          auto& s = obj->particles.springs[local];
          (b.kind == K::spring_rest ? s.rest : s.ke) = entry(e, 0);
        }
        break;
      }
      default:
        notes.push_back(std::string(scene::to_string(b.kind)) + (b.object.empty() ? "" : "[" + b.object + "]") +
                        ": not part of the scene document");
        break;
    }
  }
  return notes;
}

}  // namespace adj::optim
