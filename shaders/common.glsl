// shared by the scene shaders: the frame's uniforms, the per-draw push constants, the
// lighting model, shadows and colormaps. Mirrors render/scene_gpu.h; keep them in step.

struct View {
  mat4 view_proj;  // world -> clip
  vec4 eye;        // xyz eye position, w: 1 orthographic
  vec4 forward;    // xyz unit view direction
  vec4 viewport;   // width, height of the image [px]; z: the pass's pixels per image pixel
};

layout(set = 0, binding = 0) uniform Frame {
  View views[2];         // 0: the camera, 1: the light (shadow map)
  vec4 light_dir;        // xyz unit towards the light, w intensity
  vec4 light_color;      // rgb linear, w: 1 when shadows are on
  vec4 sky_ambient;      // rgb linear, premultiplied by the ambient strength
  vec4 ground_ambient;
  vec4 shadow;           // x world size of a texel, y 1/resolution, z depth bias, w 1: one lookup
  vec4 ground;           // x height, y cell, z fade radius, w 1 = z-up world (0: y-up)
  vec4 ground_color;     // rgb linear
  vec4 ground_center;    // xyz centre of the fade
  vec4 colormaps[2 * 64];  // sRGB tables, 64 entries per map (render/colormap.h)
} frame;

layout(set = 0, binding = 1) uniform sampler2DShadow shadow_map;

layout(push_constant) uniform Draw {
  vec4 data[4];  // model matrix columns (meshes) or per-kind parameters
  vec4 color;    // base colour: sRGB + alpha
  vec4 params;   // x scalar min, y 1/(max - min), z, w per kind
  uvec4 flags;   // x view index, y object id, z bits (below), w per kind
} pc;

const uint F_NORMALS = 1u;   // per-vertex normals given (else flat)
const uint F_SCALARS = 2u;   // colour by scalar through the colormap
const uint F_COLORS = 4u;    // per-element RGBA8 colours given
const uint F_CMAP_SHIFT = 8u;  // colormap index in bits 8..15

vec3 srgb_to_linear(vec3 c) { return pow(max(c, vec3(0.0)), vec3(2.2)); }

// soft shoulder above 0.8, then gamma: highlights roll off instead of clipping
vec3 to_display(vec3 c) {
  vec3 over = max(c - 0.8, vec3(0.0));
  c = min(c, vec3(0.8)) + 0.2 * (1.0 - exp(-over / 0.2));
  return pow(c, vec3(1.0 / 2.2));
}

vec3 colormap(uint map, float t) {
  float x = clamp(t, 0.0, 1.0) * 63.0;
  int i = min(int(x), 62);
  int base = int(map) * 64;
  vec3 c = mix(frame.colormaps[base + i].rgb, frame.colormaps[base + i + 1].rgb, x - float(i));
  return srgb_to_linear(c);
}

vec3 view_dir(vec3 p) {  // unit, from p towards the camera
  View v = frame.views[0];
  return v.eye.w > 0.5 ? -v.forward.xyz : normalize(v.eye.xyz - p);
}

// 0 (in shadow) .. 1 (lit); 4 taps of 2x2 hardware PCF (1 when frame.shadow.w says so)
float shadow_at(vec3 p, vec3 n) {
  if (frame.light_color.w < 0.5) return 1.0;
  float ndl = dot(n, frame.light_dir.xyz);
  vec3 q = p + n * frame.shadow.x * (1.0 + 1.5 * (1.0 - abs(ndl)));
  vec4 c = frame.views[1].view_proj * vec4(q, 1.0);
  vec3 s = c.xyz / c.w;
  vec2 uv = s.xy * 0.5 + 0.5;
  if (any(lessThan(uv, vec2(0.0))) || any(greaterThan(uv, vec2(1.0))) || s.z >= 1.0) return 1.0;
  float z = s.z - frame.shadow.z;
  if (frame.shadow.w > 0.5) return texture(shadow_map, vec3(uv, z));
  vec2 o = vec2(frame.shadow.y * 0.9);
  float sum = texture(shadow_map, vec3(uv + vec2(-o.x, -o.y), z)) +
              texture(shadow_map, vec3(uv + vec2(o.x, -o.y), z)) +
              texture(shadow_map, vec3(uv + vec2(-o.x, o.y), z)) +
              texture(shadow_map, vec3(uv + vec2(o.x, o.y), z));
  return sum * 0.25;
}

// hemisphere ambient + wrapped diffuse key light + soft specular + a faint rim
vec3 shade(vec3 albedo, vec3 n, vec3 p, float shadow) {
  vec3 v = view_dir(p);
  vec3 l = frame.light_dir.xyz;
  float ndl = dot(n, l);
  float diffuse = max((ndl + 0.15) / 1.15, 0.0);
  float n_up = frame.ground.w > 0.5 ? n.z : n.y;
  vec3 amb = mix(frame.ground_ambient.rgb, frame.sky_ambient.rgb, 0.5 + 0.5 * n_up);
  vec3 direct = frame.light_color.rgb * frame.light_dir.w * shadow;
  vec3 h = normalize(l + v);
  float spec = pow(max(dot(n, h), 0.0), 48.0) * 0.18 * step(0.0, ndl);
  float rim = pow(1.0 - max(dot(n, v), 0.0), 4.0) * 0.12;
  return albedo * (amb + direct * diffuse) + direct * spec + amb * rim;
}
