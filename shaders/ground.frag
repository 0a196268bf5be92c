#version 450
#extension GL_GOOGLE_include_directive : require
// ground grid: anti-aliased minor/major lines, lit, shadowed, fading out with distance
#include "common.glsl"

layout(location = 0) in vec3 v_world;
layout(location = 0) out vec4 o_color;

// coverage (0..1) of grid lines of spacing `cell`, about `width` pixels of the image wide
// (a reduced scene pass draws them as wide as a full-size one: fewer, partly covered pixels)
float grid(vec2 p, float cell, float width) {
  float px = frame.views[0].viewport.z;  // pass pixels per image pixel
  vec2 g = p / cell;
  vec2 fw = max(fwidth(g), vec2(1e-6));
  vec2 d = abs(fract(g - 0.5) - 0.5) / fw;
  float line = 1.0 - clamp(min(d.x, d.y) - 0.5 * width * px + 0.5, 0.0, 1.0);
  // cells under ~4 image px would alias: fade them out
  return line * (1.0 - smoothstep(0.12, 0.3, max(fw.x, fw.y) * px));
}

void main() {
  bool z_up = frame.ground.w > 0.5;
  vec3 n = z_up ? vec3(0.0, 0.0, 1.0) : vec3(0.0, 1.0, 0.0);
  vec2 along = z_up ? v_world.xy : v_world.xz;  // the ground's own coordinates
  vec2 centre = z_up ? frame.ground_center.xy : frame.ground_center.xz;
  float cell = frame.ground.y;
  float minor = grid(along, cell, 1.0);
  float major = grid(along, cell * 10.0, 1.6);
  vec3 albedo = frame.ground_color.rgb * (1.0 - 0.22 * minor) * (1.0 - 0.35 * major);
  float s = shadow_at(v_world, n);
  vec3 l = frame.light_dir.xyz;
  vec3 amb = frame.sky_ambient.rgb;
  vec3 lit = albedo * (amb + frame.light_color.rgb * frame.light_dir.w * max(dot(l, n), 0.0) * s);
  float r = length(along - centre) / frame.ground.z;
  float alpha = 1.0 - smoothstep(0.35, 1.0, r);
  o_color = vec4(to_display(lit), alpha);
}
