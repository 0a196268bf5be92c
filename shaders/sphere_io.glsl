// ray-cast sphere impostors: one camera-facing quad per instance
#ifdef VERTEX
#define VARYING out
#else
#define VARYING in
#endif
layout(location = 0) VARYING vec3 v_quad;             // world point on the quad
layout(location = 1) flat VARYING vec4 v_sphere;      // centre, radius
layout(location = 2) flat VARYING vec4 v_color;       // linear rgb + alpha
layout(location = 3) VARYING float v_scalar;          // 0..1 through the colormap
layout(location = 4) flat VARYING uvec4 v_info;       // object id, instance, bits, 0

#if !defined(VERTEX) && !defined(SPHERE_NO_HIT)
// hits lie behind the quad (sphere.vert): early depth tests remain valid
layout(depth_greater) out float gl_FragDepth;

// the visible hit of the view ray through v_quad (and its depth); false when it misses
bool hit_sphere(out vec3 p, out vec3 n) {
  View v = frame.views[pc.flags.x];
  vec3 c = v_sphere.xyz;
  float r = v_sphere.w;
  vec3 ro, rd;
  if (v.eye.w > 0.5) {
    rd = v.forward.xyz;
    ro = v_quad - rd * (2.0 * r);
  } else {
    ro = v.eye.xyz;
    rd = normalize(v_quad - ro);
  }
  vec3 oc = ro - c;
  float b = dot(oc, rd);
  float h = b * b - (dot(oc, oc) - r * r);
  if (h < 0.0) return false;
  float t = -b - sqrt(h);
  p = ro + rd * t;
  n = (p - c) / r;
  vec4 clip = v.view_proj * vec4(p, 1.0);
  gl_FragDepth = clip.z / clip.w;
  return true;
}
#endif
