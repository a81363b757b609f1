-- scenes/bench/cloth_32.lua: a 32 x 32 cloth (1,024 particles) held by its two top corners,
-- released flat and swinging (Baraff and Witkin's demonstration), implicit at dt = 1/60.
-- 1 m square, 0.3 kg, stretch 2000 N/m, shear 50 N/m, bend 2e-4 N m; CG tolerance 1e-2.
-- scenes/bench/cloth_64.lua is the same at 64 x 64 (cloth_scene below).
-- Run: ./impetus bench scenes/bench/cloth_32.lua
local function cloth_scene(N)
  return {
    title = N .. " x " .. N .. " cloth, implicit",
    dt = 1 / 60,
    camera = { eye = { 1.8, 1.6, 2.2 }, target = { 0, 1.3, 0 } },
    cloth_scene = cloth_scene,
    setup = function(world)
      world.integrator = "implicit"
      world:cloth { rows = N, cols = N, size = 1, normal = { 0, 1, 0 }, position = { 0, 2, 0 }, pin = "top_corners",
        mass = 0.3, stretch = 2000, shear = 50, bend = 2e-4, damping = 0.01 }
    end,
  }
end
return cloth_scene(32)
