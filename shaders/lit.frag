#version 450
#extension GL_GOOGLE_include_directive : require
// lit opaque geometry: two-sided, smooth or flat normals, base colour or colormap
#include "common.glsl"
#include "lit_io.glsl"

layout(location = 0) out vec4 o_color;

void main() {
  uint bits = v_info.z;
  vec3 v = view_dir(v_world);
  bool smooth_n = (bits & F_NORMALS) != 0u && dot(v_normal, v_normal) > 1e-12;
  vec3 n = smooth_n ? normalize(v_normal) : normalize(cross(dFdx(v_world), dFdy(v_world)));
  bool front = dot(n, v) >= 0.0;
  if (!front) n = -n;  // two-sided: light the side we see
  vec3 albedo = v_color.rgb;
  if ((bits & F_SCALARS) != 0u) albedo = colormap((bits >> F_CMAP_SHIFT) & 255u, v_scalar);
  if (!front && smooth_n && v_info.w != 0u) albedo = srgb_to_linear(unpackUnorm4x8(v_info.w).rgb);
  float s = shadow_at(v_world, n);
  o_color = vec4(to_display(shade(albedo, n, v_world, s)), 1.0);
}
