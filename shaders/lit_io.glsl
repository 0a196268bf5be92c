// varyings of lit geometry (meshes, shapes, arrows): vertex -> lit.frag / id.frag
#ifdef VERTEX
#define VARYING out
#else
#define VARYING in
#endif
layout(location = 0) VARYING vec3 v_world;
layout(location = 1) VARYING vec3 v_normal;
layout(location = 2) VARYING vec4 v_color;    // linear rgb + alpha
layout(location = 3) VARYING float v_scalar;  // 0..1 through the colormap
layout(location = 4) flat VARYING uvec4 v_info;  // object id, element (~0: primitive), bits, back colour
