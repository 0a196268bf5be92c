#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "sphere_io.glsl"

layout(location = 0) out vec4 o_color;

void main() {
  vec3 p, n;
  if (!hit_sphere(p, n)) discard;
  vec3 albedo = v_color.rgb;
  if ((v_info.z & F_SCALARS) != 0u) albedo = colormap((v_info.z >> F_CMAP_SHIFT) & 255u, v_scalar);
  o_color = vec4(to_display(shade(albedo, n, p, shadow_at(p, n))), 1.0);
}
